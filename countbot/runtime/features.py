"""How a feature package plugs into the runtime: it adds tools, given only the ports it uses.

A surface picks the features it runs (the daemon: the scheduler's jobs and the subagents; the
in-process `countbot chat`: none) and hands them to `open_runtime`. Each is bound to the
runtime's shared services as soon as they are open (`bind`: the job book, the subagents' table,
what the daemon starts with), and asked for its tools when the turn machinery is built (`tools`:
at once for the CLI, at the daemon's first turn), while the one tool registry is made, before the
agent loop exists. So every tool is registered in one place, the system prompt knows them all,
and no feature holds the whole `Runtime`: it keeps the few ports it needs. A feature that needs
the running daemon later (the subagent manager needs the gateway) is started by the daemon with
that one extra part. A feature's routes and commands live in the surfaces
(`web/api/<feature>.py`, `cli/<feature>.py`): surfaces import features, never the reverse.

This module is imported by every feature at start-up, so it names the turn machinery's types
only for the type checker: an idle daemon has not imported them (`runtime/turn_parts.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from countbot.config.settings import Settings
from countbot.runtime.deliveries import DeliveryRouter
from countbot.store.database import Database
from countbot.store.sessions import SessionStore

if TYPE_CHECKING:
    from countbot.agent.personas import PersonaLoader
    from countbot.common.masking import SecretMasker
    from countbot.llm.token_process import TokenProcess
    from countbot.memory.memory_file import MemoryFile
    from countbot.runtime.budget import BudgetGuard
    from countbot.runtime.models import SettingsModelResolver
    from countbot.runtime.persistence import TurnRecorder
    from countbot.skills.loader import SkillsLoader
    from countbot.tools.base import Tool
    from countbot.tools.registry import ToolRegistry


@dataclass(frozen=True, slots=True)
class LoopPorts:
    """What a feature needs to run turns of an AgentLoop of its own (a subagent's): the same
    model resolver, prompt sources, recorder and spending limits as the assistant's loop."""

    models: SettingsModelResolver
    personas: PersonaLoader
    skills: SkillsLoader
    memory: MemoryFile
    recorder: TurnRecorder
    spending: BudgetGuard
    masker: SecretMasker
    # Token counts, from a child process started at the first request that needs them.
    tokens: TokenProcess


@dataclass(frozen=True, slots=True)
class SharedPorts:
    """The runtime's shared services, open from the start; a feature keeps only what it uses."""

    settings: Settings
    db: Database
    sessions: SessionStore
    deliveries: DeliveryRouter
    # The agent whose house these are (`countbot/agents/`).
    agent: str = field(default="main", kw_only=True)


@dataclass(frozen=True, slots=True)
class FeaturePorts(SharedPorts):
    """The shared services and the turn machinery, as a feature's `tools` gets them."""

    # The assistant's registry as built so far: the built-in tools and earlier features' tools.
    tools: ToolRegistry
    loops: LoopPorts


class Feature(Protocol):
    """A package at the edge (beside `scheduler/`) that adds tools to every turn."""

    def bind(self, ports: SharedPorts) -> object:
        """Take the shared services; called once, when the runtime has opened them (what it
        returns is the feature's own business)."""
        ...

    def tools(self, ports: FeaturePorts) -> Sequence[Tool]:
        """The tools to offer (none is fine); called once, before the agent loop is built."""
        ...
