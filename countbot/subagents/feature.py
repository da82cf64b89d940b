"""Subagents as a runtime feature: the `spawn` and `subagents` tools, and the manager behind them.

The daemon opens its runtime with a `SubagentsFeature` (so the tools are registered with the
rest, before the agent loop is built) and starts the manager once its gateway exists.
"""

from __future__ import annotations

from collections.abc import Sequence

from countbot.gateway.gateway import Gateway
from countbot.runtime.features import FeaturePorts
from countbot.subagents.manager import SubagentManager
from countbot.subagents.store import SubagentStore
from countbot.subagents.tools import SpawnTool, SubagentsTool
from countbot.tools.base import Tool


class SubagentsFeature:
    """Implements `runtime.features.Feature`; `start` runs the manager in the daemon."""

    def __init__(self) -> None:
        self.manager: SubagentManager | None = None

    def tools(self, ports: FeaturePorts) -> Sequence[Tool]:
        settings = ports.settings.subagents
        self.manager = SubagentManager(ports, SubagentStore(ports.db), settings)
        if settings.max_depth < 1:
            return []
        return [SpawnTool(self.manager), SubagentsTool(self.manager)]

    async def start(self, gateway: Gateway) -> SubagentManager:
        """Deliver what a stopped daemon owed and take new subagents from now on."""
        if self.manager is None:
            raise RuntimeError("open the runtime with this feature before starting it")
        await self.manager.start(gateway)
        return self.manager
