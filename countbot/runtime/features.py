"""How a feature package plugs into the runtime: it adds tools, given only the ports it uses.

A surface picks the features it runs (the daemon: the scheduler's jobs and the subagents; the
in-process `countbot chat`: none) and hands them to `open_runtime`, which asks each one for its
tools while it builds the one tool registry, before the agent loop exists. So every tool is
registered in one place, the system prompt knows them all, and no feature holds the whole
`Runtime`: it keeps the few ports it needs. A feature that needs the running daemon later (the
subagent manager needs the gateway) is started by the daemon with that one extra part. A
feature's routes and commands live in the surfaces (`web/api/<feature>.py`,
`cli/<feature>.py`): surfaces import features, never the reverse.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from countbot.agent.context.keeper import ContextKeeper
from countbot.agent.context.prompt import PromptBuilder
from countbot.agent.context.summary import OverflowSummarizer
from countbot.agent.loop import AgentLoop
from countbot.agent.ports import AgentHooks, MemoryRecall, SpendingGuard
from countbot.config.settings import AgentSettings, Settings
from countbot.dataflow.summaries import SummaryMarks
from countbot.llm.token_process import TokenProcess
from countbot.masking import SecretMasker
from countbot.memory.memory_file import MemoryFile
from countbot.personas.presets import PersonaLoader
from countbot.runtime.budget import BudgetGuard
from countbot.runtime.models import ModelResolver
from countbot.runtime.outbound import OutboundRouter
from countbot.runtime.persistence import TurnRecorder
from countbot.skills.loader import SkillsLoader
from countbot.store.database import Database
from countbot.store.sessions import SessionStore
from countbot.tools.base import Tool
from countbot.tools.registry import ToolRegistry


@dataclass(frozen=True, slots=True)
class LoopPorts:
    """What a feature needs to run turns of an AgentLoop of its own (a subagent's): the same
    model resolver, prompt sources, recorder and spending limits as the assistant's loop."""

    models: ModelResolver
    personas: PersonaLoader
    skills: SkillsLoader
    memory: MemoryFile
    recorder: TurnRecorder
    spending: BudgetGuard
    masker: SecretMasker
    # Token counts, from a child process started at the first request that needs them.
    tokens: TokenProcess


@dataclass(frozen=True, slots=True)
class FeaturePorts:
    """The runtime's shared services a feature may take from; each keeps only what it uses."""

    settings: Settings
    db: Database
    sessions: SessionStore
    outbound: OutboundRouter
    # The assistant's registry as built so far: the built-in tools and earlier features' tools.
    tools: ToolRegistry
    loops: LoopPorts


class Feature(Protocol):
    """A package at the edge (beside `scheduler/`) that adds tools to every turn."""

    def tools(self, ports: FeaturePorts) -> Sequence[Tool]:
        """The tools to offer (none is fine); called once, before the agent loop is built."""
        ...


def prompt_sources(ports: FeaturePorts) -> dict[str, Any]:
    """What every system prompt is built from: `PromptBuilder`'s arguments but the tool names."""
    settings, loops = ports.settings, ports.loops
    return {
        "workspace": settings.workspace,
        "persona_loader": loops.personas,
        "persona_settings": settings.persona,
        "skills": loops.skills,
        "memory": loops.memory,
        "timezone": settings.timezone,
    }


def agent_loop(
    ports: FeaturePorts,
    *,
    prompt: PromptBuilder,
    tools: ToolRegistry,
    limits: AgentSettings,
    hooks: AgentHooks,
    spending: SpendingGuard,
    recall: MemoryRecall | None = None,
    files_summary: Callable[[str], bool] = lambda _session_id: False,
) -> AgentLoop:
    """An AgentLoop on the runtime's model, history and memory: the assistant's or a subagent's.

    `recall` brings memory hits into each turn; `files_summary` says whose overflow summaries go
    to the user's MEMORY.md (by default none: a subagent's never do).
    """
    summarizer = OverflowSummarizer(
        ports.sessions,
        ports.loops.memory,
        limits.max_history,
        files_summary=files_summary,
        mark=SummaryMarks(tools.get),
    )
    keeper = ContextKeeper(
        history=ports.sessions,
        summarizer=summarizer,
        prompt=prompt,
        tools=tools,
        settings=limits,
        counter=ports.loops.tokens,
        recall=recall,
    )
    return AgentLoop(
        resolve_model=ports.loops.models,  # one provider, cooldowns and local model for all
        context=keeper,
        tools=tools,
        settings=limits,
        workspace=ports.settings.workspace,
        hooks=hooks,
        spending=spending,
    )
