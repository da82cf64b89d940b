"""Builds the AgentLoop one subagent runs: its focused prompt, its tools and its own limits.

Each subagent gets a loop of its own (cheap: the model provider, the store and the tools are
shared) so its prompt, tool set and iteration limit never touch the assistant's.
"""

from __future__ import annotations

from collections.abc import Iterable

from countbot.agent.context.keeper import ContextKeeper
from countbot.agent.context.summary import OverflowSummarizer
from countbot.agent.loop import AgentLoop
from countbot.config.settings import SubagentSettings
from countbot.runtime.assembly import Runtime
from countbot.runtime.persistence import TurnRecorder
from countbot.subagents.prompt import SubagentContext
from countbot.subagents.tools import SpawnTool, SubagentsTool
from countbot.tools.base import Tool
from countbot.tools.message_tool import MessageTool
from countbot.tools.paging import ReadResultTool
from countbot.tools.registry import ToolRegistry

# A subagent reports to the assistant; it never talks to the user itself.
NEVER_FOR_SUBAGENTS = frozenset({MessageTool.name})
SPAWNING = frozenset({SpawnTool.name, SubagentsTool.name})


class SubagentLoops:
    """Makes subagent loops from the runtime's parts (one per daemon)."""

    def __init__(self, runtime: Runtime, settings: SubagentSettings) -> None:
        self._runtime = runtime
        self._settings = settings
        self._models = runtime.models  # one provider, cooldowns and local model server for all
        self._recorder = TurnRecorder(
            runtime.sessions, runtime.tool_calls, runtime.usage, runtime.audit, runtime.masker
        )

    def allowed_tools(self, depth: int) -> list[str]:
        """The assistant's tools a subagent at `depth` (1 = spawned by the assistant) may use."""
        may_spawn = depth < self._settings.max_depth
        return [
            name
            for name in self._runtime.tools.names()
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
        self, *, task: str, label: str, tools: Iterable[str] | None, depth: int, parent: str
    ) -> AgentLoop:
        runtime, settings = self._runtime, self._runtime.settings
        names = self.allowed_tools(depth)
        if tools is not None:
            wanted = set(tools)
            names = [name for name in names if name in wanted]
        registry = _registry(runtime, names)
        context = SubagentContext(
            task=task,
            label=label,
            tool_names=registry.names(),
            workspace=settings.workspace,
            persona_loader=runtime.personas,
            persona_settings=settings.persona,
            skills=runtime.skills,
            memory=runtime.memory,
            timezone=settings.timezone,
        )
        limits = settings.agent.model_copy(update={"max_iterations": self._settings.max_iterations})
        keeper = ContextKeeper(
            history=runtime.sessions,
            summarizer=OverflowSummarizer(
                runtime.sessions,
                runtime.memory,
                limits.max_history,
                files_summary=lambda _session_id: False,  # never in the user's MEMORY.md
            ),
            prompt=context,
            tools=registry,
            settings=limits,
        )
        return AgentLoop(
            resolve_model=self._models,
            context=keeper,
            tools=registry,
            settings=limits,
            workspace=settings.workspace,
            hooks=self._recorder.hooks(parent_session=parent),
        )


def _registry(runtime: Runtime, names: list[str]) -> ToolRegistry:
    agent = runtime.settings.agent
    registry = ToolRegistry(
        default_timeout=agent.tool_timeout,
        max_retries=agent.max_retries,
        retry_delay=agent.retry_delay,
        masker=runtime.masker,
        gate=runtime.tools.gate,
    )
    for name in names:
        tool = runtime.tools.get(name)
        if isinstance(tool, ReadResultTool):
            tool = ReadResultTool(registry)  # pages live in the registry that cut them
        if isinstance(tool, Tool):
            registry.register(tool)
    return registry
