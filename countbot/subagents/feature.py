"""Subagents as a runtime feature: the `spawn` and `subagents` tools, and the manager behind them.

The daemon opens its runtime with a `SubagentsFeature`: the manager is made when the runtime
opens (`bind`) and started once the daemon's gateway exists; the tools, and the loop maker they
need, come with the turn machinery (`tools`, registered with the rest before the agent loop is
built), so they are imported only then. Every agent's house gets its own tools: its subagents
run in its house, and its tools see only its own subagents (`_AgentSubagents`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from countbot.gateway.gateway import Gateway
from countbot.runtime.features import FeaturePorts, SharedPorts
from countbot.subagents.control import SpawnRequest, SubagentInfo
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
        manager.use_loops(SubagentLoops(ports, settings), ports.agent)
        if settings.max_depth < 1:
            return []
        control = _AgentSubagents(manager, ports.agent)
        return [SpawnTool(control), SubagentsTool(control)]

    async def start(self, gateway: Gateway) -> SubagentManager:
        """Deliver what a stopped daemon owed and take new subagents from now on."""
        manager = self._bound()
        await manager.start(gateway)
        return manager

    def _bound(self) -> SubagentManager:
        if self.manager is None:
            raise RuntimeError("open the runtime with this feature before starting it")
        return self.manager


class _AgentSubagents:
    """The manager as one agent's tools see it (the `SubagentControl` port): another agent's
    subagent is as good as none."""

    def __init__(self, manager: SubagentManager, agent: str) -> None:
        self._manager = manager
        self._agent = agent

    async def spawn(self, request: SpawnRequest) -> SubagentInfo:
        return await self._manager.spawn(request)  # it runs in the parent session's agent's house

    async def children(self, parent_session: str) -> list[SubagentInfo]:
        return await self._manager.children(parent_session)

    async def info(self, subagent_id: str) -> SubagentInfo | None:
        return await self._manager.info(subagent_id) if await self._owns(subagent_id) else None

    async def cancel(self, subagent_id: str) -> bool:
        return await self._owns(subagent_id) and await self._manager.cancel(subagent_id)

    async def _owns(self, subagent_id: str) -> bool:
        record = await self._manager.get(subagent_id)
        return record is not None and await self._manager.agent_of(record.session_id) == self._agent
