"""Subagents as a runtime feature: the `spawn` and `subagents` tools, and the manager behind them.

The daemon opens its runtime with a `SubagentsFeature`: the manager is made when the runtime
opens (`bind`) and started once the daemon's gateway exists; the tools, and the loop maker they
need, come with the turn machinery (`tools`, registered with the rest before the agent loop is
built), so they are imported only then.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from countbot.gateway.gateway import Gateway
from countbot.runtime.features import FeaturePorts, SharedPorts
from countbot.subagents.manager import SubagentManager
from countbot.subagents.store import SubagentStore

if TYPE_CHECKING:
    from countbot.tools.base import Tool


class SubagentsFeature:
    """Implements `runtime.features.Feature`; `start` runs the manager in the daemon."""

    def __init__(self) -> None:
        self.manager: SubagentManager | None = None

    def bind(self, ports: SharedPorts) -> None:
        self.manager = SubagentManager(ports, SubagentStore(ports.db), ports.settings.subagents)

    def tools(self, ports: FeaturePorts) -> Sequence[Tool]:
        # Imported with the turn machinery (the loop maker builds AgentLoops), never at start.
        from countbot.subagents.loops import SubagentLoops
        from countbot.subagents.tools import SpawnTool, SubagentsTool

        manager, settings = self._bound(), ports.settings.subagents
        manager.use_loops(SubagentLoops(ports, settings))
        if settings.max_depth < 1:
            return []
        return [SpawnTool(manager), SubagentsTool(manager)]

    async def start(self, gateway: Gateway) -> SubagentManager:
        """Deliver what a stopped daemon owed and take new subagents from now on."""
        manager = self._bound()
        await manager.start(gateway)
        return manager

    def _bound(self) -> SubagentManager:
        if self.manager is None:
            raise RuntimeError("open the runtime with this feature before starting it")
        return self.manager
