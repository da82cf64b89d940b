"""What every route reaches through `request.app.state.daemon`: runtime, gateway, channels, jobs."""

from __future__ import annotations

from dataclasses import dataclass

from countbot.channels.manager import ChannelManager
from countbot.gateway.gateway import Gateway
from countbot.gateway.subagents import SubagentManager
from countbot.runtime.assembly import Runtime
from countbot.scheduler.assembly import Scheduler


@dataclass(slots=True)
class DaemonContext:
    """The live daemon; `litellm_ready` flips once the background import has finished."""

    runtime: Runtime
    gateway: Gateway
    channels: ChannelManager
    scheduler: Scheduler
    subagents: SubagentManager
    litellm_ready: bool = False

    @property
    def model_ready(self) -> bool:
        return self.litellm_ready and bool(self.runtime.settings.model.name.strip())
