"""Builds the AgentLoop one subagent runs: its focused prompt, its tools and its own limits.

Each subagent gets a loop of its own (cheap: the model provider, the store and the tools are
shared) so its prompt, tool set and iteration limit never touch the assistant's. Budgets are
the assistant's: every daily, conversation and request limit is checked before each of its model
calls, and what it spends counts in the conversation that spawned it (the root one, for a
subagent's subagent), so spawning is no way around a limit.
"""

from __future__ import annotations

from collections.abc import Iterable

from countbot.agent.loop import AgentLoop
from countbot.agent.ports import SpendCheck, SpendingGuard
from countbot.config.settings import SubagentSettings
from countbot.config.structs import replaced
from countbot.messaging.message_tool import MessageTool
from countbot.runtime.features import FeaturePorts
from countbot.runtime.turn_parts import agent_loop, prompt_sources
from countbot.subagents.prompt import SubagentContext
from countbot.subagents.tools import SpawnTool, SubagentsTool
from countbot.tools.base import Tool
from countbot.tools.paging import ReadResultTool
from countbot.tools.registry import ToolRegistry

# A subagent reports to the assistant; it never talks to the user itself.
NEVER_FOR_SUBAGENTS = frozenset({MessageTool.name})
SPAWNING = frozenset({SpawnTool.name, SubagentsTool.name})


class SubagentLoops:
    """Makes subagent loops from the runtime's parts (one per daemon)."""

    def __init__(self, ports: FeaturePorts, settings: SubagentSettings) -> None:
        self._ports = ports
        self._settings = settings

    def allowed_tools(self, depth: int) -> list[str]:
        """The assistant's tools a subagent at `depth` (1 = spawned by the assistant) may use."""
        may_spawn = depth < self._settings.max_depth
        return [
            name
            for name in self._ports.tools.names()
            if name not in NEVER_FOR_SUBAGENTS and (may_spawn or name not in SPAWNING)
        ]

    def check_tools(self, requested: Iterable[str], depth: int) -> None:
        """ValueError naming the requested tools a subagent at `depth` may not have."""
        allowed = set(self.allowed_tools(depth))
        refused = [name for name in requested if name not in allowed]
        if refused:
            may = ", ".join(sorted(allowed))
            raise ValueError(f"a subagent cannot use {', '.join(refused)}; it may use: {may}")

    def build(
        self,
        *,
        task: str,
        label: str,
        tools: Iterable[str] | None,
        depth: int,
        parent: str,
        spends_for: str,
    ) -> AgentLoop:
        """The loop of one subagent; `spends_for` is the session whose budgets it spends."""
        ports, settings = self._ports, self._ports.settings
        names = self.allowed_tools(depth)
        if tools is not None:
            wanted = set(tools)
            names = [name for name in names if name in wanted]
        registry = _registry(ports, names)
        prompt = SubagentContext(
            task=task, label=label, tool_names=registry.names(), **prompt_sources(ports)
        )
        return agent_loop(
            ports,
            prompt=prompt,
            tools=registry,
            limits=replaced(settings.agent, max_iterations=self._settings.max_iterations),
            hooks=ports.loops.recorder.hooks(parent_session=parent, spends_for=spends_for),
            spending=_SpendsFor(ports.loops.spending, spends_for),
            spends_for=spends_for,
        )


class _SpendsFor:
    """The assistant's spending guard, asked about the session a subagent spends for."""

    def __init__(self, guard: SpendingGuard, session_id: str) -> None:
        self._guard = guard
        self._session_id = session_id

    def limited(self) -> bool:
        return self._guard.limited()

    async def check(
        self, session_id: str, model: str, turn_tokens: int, next_tokens: int
    ) -> SpendCheck:
        return await self._guard.check(self._session_id, model, turn_tokens, next_tokens)


def _registry(ports: FeaturePorts, names: list[str]) -> ToolRegistry:
    agent = ports.settings.agent
    registry = ToolRegistry(
        default_timeout=agent.tool_timeout,
        max_retries=agent.max_retries,
        retry_delay=agent.retry_delay,
        masker=ports.loops.masker,
        gate=ports.tools.gate,
    )
    for name in names:
        tool = ports.tools.get(name)
        if isinstance(tool, ReadResultTool):
            tool = ReadResultTool(registry)  # pages live in the registry that cut them
        if isinstance(tool, Tool):
            registry.register(tool)
    return registry
