"""What every route reaches through `request.app.state.daemon`: runtime, gateway, channels, jobs."""

from __future__ import annotations

from dataclasses import dataclass, field

from countbot.agents.houses import Houses
from countbot.channels.manager import ChannelManager
from countbot.gateway.gateway import Gateway
from countbot.local_model.models import effective_model, embedded_default
from countbot.runtime.assembly import Runtime
from countbot.scheduler.assembly import Scheduler
from countbot.subagents.manager import SubagentManager
from countbot.triggers.feature import Triggers
from countbot.web.config_state import ConfigState


@dataclass(slots=True)
class DaemonContext:
    """The live daemon; `litellm_ready` flips once the background import has finished (at once
    when the direct path serves the configured models)."""

    runtime: Runtime
    gateway: Gateway
    channels: ChannelManager
    scheduler: Scheduler
    subagents: SubagentManager
    triggers: Triggers
    # Every agent's house (`main`'s is `runtime`).
    houses: Houses
    litellm_ready: bool = False
    config_state: ConfigState = field(default_factory=ConfigState)

    @property
    def model_ready(self) -> bool:
        """A model is set (or the built-in one runs) and litellm has loaded: the first turn will
        not wait for the import."""
        return self.litellm_ready and self.model_configured

    @property
    def model_configured(self) -> bool:
        """Whether turns have a model (configured, or the built-in default); the UI's "no model"
        banner follows this, not litellm's import (a turn sent while litellm loads just waits)."""
        settings = self.runtime.settings
        return bool(effective_model(settings.model, settings.data_dir))

    @property
    def offline_default(self) -> bool:
        """Whether turns use the built-in tiny model because no model is configured."""
        settings = self.runtime.settings
        return embedded_default(settings.model, settings.data_dir) is not None
