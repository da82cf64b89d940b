"""What every route reaches through `request.app.state.daemon`: runtime, gateway, channels, jobs."""

from __future__ import annotations

from dataclasses import dataclass

from countbot.channels.manager import ChannelManager
from countbot.gateway.gateway import Gateway
from countbot.runtime.assembly import Runtime
from countbot.scheduler.assembly import Scheduler


@dataclass(slots=True)
class DaemonContext:
    """The live daemon; `litellm_ready` flips once the background import has finished (at once
    when the direct path serves the configured models)."""

    runtime: Runtime
    gateway: Gateway
    channels: ChannelManager
    scheduler: Scheduler
    litellm_ready: bool = False

    @property
    def model_ready(self) -> bool:
        return self.litellm_ready and bool(self.runtime.settings.model.name.strip())
