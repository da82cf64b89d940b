"""The turn machinery: the tool registry with every tool, the data-flow gate, the recorder, the
agent loop and the MCP servers' manager, built over a runtime's open stores.

A process that runs a turn at once (`chat -m`, `cron run`) builds it while it opens its runtime;
the daemon builds it at its first turn (`Runtime.turn_parts`, this module imported in a worker
thread), so an idle daemon holds none of the agent, tools, model or context modules.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from countbot.agent.context.keeper import ContextKeeper
from countbot.agent.context.prompt import PromptBuilder
from countbot.agent.context.summary import OverflowSummarizer
from countbot.agent.loop import AgentLoop
from countbot.agent.personas import PersonaLoader
from countbot.agent.ports import AgentHooks, MemoryRecall, SpendingGuard
from countbot.common.masking import SecretMasker
from countbot.config.agent_view import budget_scope, may_reach
from countbot.config.settings import AgentSettings, Settings
from countbot.dataflow.policy import OutboundPolicy
from countbot.dataflow.seed import SessionSeed
from countbot.dataflow.summaries import SummaryMarks
from countbot.execution.sandbox import Sandbox
from countbot.llm.token_process import TokenProcess
from countbot.mcp.host_start import Remembered
from countbot.mcp.manager import McpManager
from countbot.memory.memory_file import MemoryFile
from countbot.memory_index.index import MemoryIndex
from countbot.memory_index.recall import AutoRecall
from countbot.messaging.message_tool import Deliverer
from countbot.runtime.approvals import ApprovalBroker
from countbot.runtime.budget import BudgetGuard
from countbot.runtime.builtin_tools import (
    MachineWiring,
    TurnWiring,
    builtin_tools,
    check_feature_tool,
)
from countbot.runtime.deliveries import DeliveryResult, DeliveryRouter, DeliveryTarget
from countbot.runtime.features import Feature, FeaturePorts, LoopPorts, SharedPorts
from countbot.runtime.models import SettingsModelResolver
from countbot.runtime.persistence import TurnRecorder
from countbot.runtime.sensitive import private_paths, secrets_of
from countbot.skills.loader import SkillsLoader
from countbot.store.audit import AuditLog
from countbot.store.counters import DailyCounters
from countbot.store.pairing import PairingStore
from countbot.store.sessions import SessionStore
from countbot.store.tool_calls import ToolCallLog
from countbot.store.usage import UsageLog
from countbot.tools.paging import ResultArchive
from countbot.tools.registry import ToolRegistry
from countbot.web_access.http_client import WebClient


class OpenedRuntime(Protocol):
    """What the machinery is built over: the runtime's open stores and services."""

    settings: Settings
    masker: SecretMasker
    sessions: SessionStore
    tool_calls: ToolCallLog
    usage: UsageLog
    audit: AuditLog
    memory: MemoryFile
    memory_index: MemoryIndex
    skills: SkillsLoader
    personas: PersonaLoader
    deliveries: DeliveryRouter
    sandbox: Sandbox
    approvals: ApprovalBroker
    models: SettingsModelResolver
    ports: SharedPorts


@dataclass(frozen=True, slots=True)
class TurnParts:
    """The assistant's tools, its agent loop and the MCP servers whose tools join the registry."""

    tools: ToolRegistry
    agent: AgentLoop
    mcp: McpManager
    # The HTTP client web_fetch and web_search share (built at their first call).
    web_client: WebClient
    # What features (and tests) build loops of their own from.
    ports: FeaturePorts

    async def close(self) -> None:
        await self.mcp.close()
        await self.web_client.aclose()
        await self.ports.loops.tokens.close()


def build_turn_parts(runtime: OpenedRuntime, features: Sequence[Feature]) -> TurnParts:
    """The tools, the features' tools, the agent loop and MCP (not started yet: its servers'
    tasks belong to the event loop), over the opened runtime. Objects only, touching nothing
    the event loop is using, so `Runtime` runs it in a worker thread with this module's import
    (and the features' tool modules')."""
    settings, shared = runtime.settings, runtime.ports
    deliverer = _MessageDeliverer(
        runtime.deliveries, settings, PairingStore(shared.db), runtime.sessions, shared.agent
    )
    web_client = WebClient()
    tools = _tool_registry(runtime, deliverer, web_client)
    tools.gate = outbound_policy(settings, runtime.sessions, runtime.audit, tools)
    recorder = TurnRecorder(runtime.tool_calls, runtime.usage, runtime.audit, runtime.masker)
    loops = LoopPorts(
        models=runtime.models,
        personas=runtime.personas,
        skills=runtime.skills,
        memory=runtime.memory,
        recorder=recorder,
        spending=BudgetGuard(
            lambda: settings.budget,
            runtime.usage,
            DailyCounters(shared.db),
            economy=lambda: settings.model.economy,
            agent=budget_scope(settings, runtime.name),
        ),
        masker=runtime.masker,
        tokens=TokenProcess(),
    )
    ports = FeaturePorts(
        shared.settings,
        shared.db,
        shared.sessions,
        shared.deliveries,
        tools,
        loops,
        agent=shared.agent,
    )
    for feature in features:  # in the order the surface gave them
        for tool in feature.tools(ports):
            check_feature_tool(tool, type(feature).__module__.split(".")[1])
            tools.register(tool)
    # An unsandboxed server's start, remembered as allowed for this agent only.
    remembered = functools.partial(runtime.approvals.rules.allows, runtime.name)
    mcp = mcp_manager(settings, tools, runtime.sandbox, ask_to_start=remembered)
    agent = _assistant_loop(settings, ports, runtime.memory_index)
    return TurnParts(tools, agent, mcp, web_client, ports)


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
    spends_for: str | None = None,
    recall: MemoryRecall | None = None,
    files_summary: Callable[[str], bool] = lambda _session_id: False,
) -> AgentLoop:
    """An AgentLoop on the runtime's model, history and memory: the assistant's or a subagent's.

    `spends_for`: the session whose budgets its answers count against (a subagent's
    conversation; None: each turn's own); `recall` brings memory hits into each turn;
    `files_summary` says whose overflow summaries go to the user's MEMORY.md (by default none:
    a subagent's never do).
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
        counter=ports.loops.tokens,
        recall=recall,
    )
    return AgentLoop(
        resolve_model=ports.loops.models,  # one provider, cooldowns and local model for all
        keeper=keeper,
        tools=tools,
        settings=limits,
        workspace=ports.settings.workspace,
        sessions=ports.sessions,
        hooks=hooks,
        spending=spending,
        spends_for=spends_for,
    )


def _assistant_loop(settings: Settings, ports: FeaturePorts, index: MemoryIndex) -> AgentLoop:
    """The assistant's loop: its prompt, every tool, the spending limits, memory recall."""
    recall = settings.memory
    return agent_loop(
        ports,
        prompt=PromptBuilder(
            tool_names=ports.tools.names(),
            # The prompt's look rides with auto-recall's search: a turn opens with one hand-off.
            run_blocking=index.run_blocking if recall.recall else None,
            **prompt_sources(ports),
        ),
        tools=ports.tools,
        limits=settings.agent,
        hooks=ports.loops.recorder.hooks(),
        spending=ports.loops.spending,
        recall=AutoRecall(index, tokens=recall.recall_tokens) if recall.recall else None,
        files_summary=is_users_conversation,
    )


def outbound_policy(
    settings: Settings, sessions: SessionStore, audit: AuditLog, tools: ToolRegistry
) -> OutboundPolicy:
    """The data-flow policy every tool call passes (`countbot/dataflow/`)."""
    seed = SessionSeed(
        sessions,
        settings.workspace,
        secrets=lambda: [secret.get_secret_value() for secret in secrets_of(settings)],
        window=lambda: settings.agent.max_history,
    )
    return OutboundPolicy(lambda: settings.security.outbound, seed, audit.write, tools.get)


def mcp_manager(
    settings: Settings,
    tools: ToolRegistry,
    sandbox: Sandbox,
    ask_to_start: Remembered | None = None,
) -> McpManager:
    """The configured MCP servers; stdio servers run in the sandbox when it works, are refused
    when `bwrap` is required and does not work, else (given `ask_to_start`, the remembered
    approvals) start on the host only once the user approves each one."""
    return McpManager(
        settings.mcp,
        tools,
        workspace=settings.workspace,
        log_dir=settings.data_dir / "mcp",
        launcher=sandbox.server_launcher(),
        ask_to_start=ask_to_start,
    )


def _tool_registry(
    runtime: OpenedRuntime, deliverer: Deliverer, web_client: WebClient
) -> ToolRegistry:
    settings, workspace, masker = runtime.settings, runtime.settings.workspace, runtime.masker
    archive: ResultArchive = runtime.sessions
    registry = ToolRegistry(
        default_timeout=settings.agent.tool_timeout,
        max_retries=settings.agent.max_retries,
        retry_delay=settings.agent.retry_delay,
        masker=masker,
    )
    sensitive = tuple(private_paths(settings))
    machine = MachineWiring(
        settings.tools, workspace, sensitive, masker, runtime.sandbox, web_client
    )
    turn = TurnWiring(
        workspace,
        sensitive,
        runtime.skills,
        registry,
        archive,
        deliverer,
        runtime.memory,
        runtime.memory_index,
    )
    for tool in builtin_tools(machine, turn):
        registry.register(tool)
    return registry


# Sessions that are not the user's conversation: their summaries stay out of MEMORY.md.
_UNATTENDED_SESSIONS = ("cron:", "heartbeat", "subagent:")


def is_users_conversation(session_id: str) -> bool:
    """Whether a session's overflow summary belongs in the user's MEMORY.md."""
    return not session_id.startswith(_UNATTENDED_SESSIONS)


@dataclass(frozen=True, slots=True)
class _MessageDeliverer:
    """The `message` tool's view of the delivery router and of the owner's chats."""

    router: DeliveryRouter
    settings: Settings
    pairing: PairingStore
    sessions: SessionStore
    # The agent whose `message` tool this is.
    agent: str

    async def deliver(
        self, channel: str, chat_id: str, text: str, files: Sequence[Path]
    ) -> DeliveryResult:
        return await self.router.deliver(DeliveryTarget(channel, chat_id), text, files)

    def channels(self) -> list[str]:
        return self.router.channels()

    def reaches(self, channel: str, chat_id: str) -> bool:
        return may_reach(self.settings, self.agent, channel, chat_id)

    async def knows(self, channel: str, chat_id: str) -> bool:
        """Named in the channel's allow-list (not by "*"), paired, or a chat with a session."""
        section = self.settings.channels.section(channel)
        allow_from = section.allow_from if section is not None else []
        listed = {entry.strip().lstrip("@").lower() for entry in allow_from}
        # A thread (e-mail, Slack) is `<chat>/<thread>`: the chat is what the list names.
        if chat_id.split("/", 1)[0].lower() in listed:
            return True
        if await self.pairing.is_paired(channel, chat_id):
            return True
        return await self.sessions.get(f"{channel}:{chat_id}") is not None
