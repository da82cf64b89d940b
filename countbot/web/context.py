"""What every route reaches through `request.app.state.daemon`: the runtime and the gateway."""

from __future__ import annotations

from dataclasses import dataclass

from countbot.gateway.gateway import Gateway
from countbot.runtime.assembly import Runtime


@dataclass(slots=True)
class DaemonContext:
    """The live daemon; `litellm_ready` flips once the background import has finished."""

    runtime: Runtime
    gateway: Gateway
    litellm_ready: bool = False

    @property
    def model_ready(self) -> bool:
        return self.litellm_ready and bool(self.runtime.settings.model.name.strip())
