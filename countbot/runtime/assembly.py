"""Builds one CountBot runtime from settings: storage, tools, context, model and the agent loop.

The CLI and the daemon both start from here, so there is exactly one way the pieces are wired.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from countbot.agent.context.prompt import PromptBuilder
from countbot.agent.loop import AgentLoop
from countbot.config.secret import SecretStr
from countbot.config.secrets_file import secrets_path
from countbot.config.settings import McpSettings, Settings
from countbot.config.structs import Strict, replaced
from countbot.dataflow.policy import OutboundPolicy
from countbot.dataflow.seed import SessionSeed
from countbot.execution.sandbox import Sandbox
from countbot.llm.token_process import TokenProcess
from countbot.masking import SecretMasker
from countbot.mcp.host_start import Remembered
from countbot.mcp.manager import McpManager
from countbot.media.reader import MediaReader
from countbot.memory.memory_file import MemoryFile
from countbot.memory.tools import (
    MemoryForgetTool,
    MemoryReadTool,
    MemorySearchTool,
    MemoryWriteTool,
)
from countbot.memory_index.assembly import INDEX_FILE, embedder_for
from countbot.memory_index.index import MemoryIndex
from countbot.memory_index.recall import AutoRecall
from countbot.messaging.message_tool import MessageTool, Outbox
from countbot.personas.presets import PersonaLoader
from countbot.runtime.approvals import ApprovalBroker
from countbot.runtime.budget import BudgetGuard
from countbot.runtime.builtin_tools import builtin_tools
from countbot.runtime.features import (
    Feature,
    FeaturePorts,
    LoopPorts,
    agent_loop,
    prompt_sources,
)
from countbot.runtime.models import ModelResolver
from countbot.runtime.outbound import DeliveryResult, DeliveryTarget, OutboundRouter
from countbot.runtime.outbox import ChannelOutbox
from countbot.runtime.paths import SHIPPED_ROOT, seed_workspace
from countbot.runtime.persistence import TurnRecorder
from countbot.skills.loader import SkillsLoader
from countbot.store.approval_rules import ApprovalRules
from countbot.store.audit import AuditLog
from countbot.store.counters import DailyCounters
from countbot.store.database import Database
from countbot.store.outbox import OutboxStore
from countbot.store.pairing import PairingStore
from countbot.store.sessions import SessionStore
from countbot.store.tool_calls import ToolCallLog
from countbot.store.usage import UsageLog
from countbot.tools.paging import ReadResultTool, ResultArchive
from countbot.tools.registry import ToolRegistry
from countbot.tools.skill_tools import ReadSkillTool
from countbot.tools.workspace_guard import WorkspaceGuard
from countbot.web_access.http_client import WebClient


@dataclass(slots=True)
class Runtime:
    """Everything a surface needs; close it to flush the store and the audit log."""

    settings: Settings
    masker: SecretMasker
    db: Database
    sessions: SessionStore
    tool_calls: ToolCallLog
    usage: UsageLog
    audit: AuditLog
    memory: MemoryFile
    memory_index: MemoryIndex
    skills: SkillsLoader
    personas: PersonaLoader
    tools: ToolRegistry
    agent: AgentLoop
    outbound: OutboundRouter
    sandbox: Sandbox
    approvals: ApprovalBroker
    models: ModelResolver
    mcp: McpManager
    # Voice notes and documents received on channels or uploaded in the web UI, read as text.
    media: MediaReader
    # The HTTP client web_fetch and web_search share (built at their first call).
    web_client: WebClient
    # What features take from the runtime (a feature bound after the runtime opened too).
    ports: FeaturePorts

    async def close(self) -> None:
        await self.mcp.close()
        await self.web_client.aclose()
        await self.memory_index.close()
        await self.models.aclose()
        await self.ports.loops.tokens.close()
        await self.audit.close()
        await self.db.close()


def secret_masker(settings: Settings) -> SecretMasker:
    """A masker that knows every secret value in the settings, plus the generic patterns.

    Every `SecretStr` field counts, so a secret added to the settings later is masked too.
    """
    masker = SecretMasker()
    for secret in _secrets(settings):
        masker.add(secret.get_secret_value())
    return masker


def config_files(settings: Settings) -> list[Path]:
    """The config file and its `secrets.yaml`: never readable by a tool (nor in the sandbox)."""
    config = settings.config_path
    return [config, secrets_path(config)] if config else []


def _secrets(section: Strict) -> Iterator[SecretStr]:
    for name in section.__struct_fields__:
        value = getattr(section, name)
        if isinstance(value, SecretStr):
            yield value
        elif isinstance(value, Strict):
            yield from _secrets(value)
        elif isinstance(value, dict):  # MCP servers' env and headers, and the servers
            for item in value.values():
                if isinstance(item, SecretStr):
                    yield item
                elif isinstance(item, Strict):
                    yield from _secrets(item)


async def open_runtime(
    settings: Settings,
    features: Sequence[Feature] = (),
    *,
    memory_vectors: bool = False,
    prepare_model: bool = False,
) -> Runtime:
    """Open the store, seed the workspace and assemble the agent loop with the `features`' tools.

    `memory_vectors`: the memory index makes and searches embeddings (the daemon); a short-lived
    process (`chat -m`, a job run from the CLI) searches full-text only and never loads the model.
    `prepare_model`: resolve the model and open its HTTP client in the background from the start
    (`ModelResolver.prepare`), for a process that calls the model at once (`chat -m`).

    Every tool is registered here, before the loop is built (MCP servers' tools join and leave
    later as their servers do).
    """
    models = ModelResolver(lambda: settings.model, settings.data_dir)
    if prepare_model:
        models.prepare()
    try:
        await asyncio.to_thread(seed_workspace, settings.workspace)
        skills = skills_loader(settings)
        # Probing runs bwrap once (~30 ms, in a worker thread): while the store and index open.
        stores, sandbox = await asyncio.gather(
            _Stores.open(settings, memory_vectors),
            asyncio.to_thread(exec_sandbox, settings, skills),
        )
    except BaseException:
        await models.aclose()
        raise
    return _assemble(settings, features, stores, skills, sandbox, models)


@dataclass(frozen=True, slots=True)
class _Stores:
    """What `open_runtime` opens before it wires anything: the database and what lives in it."""

    masker: SecretMasker
    db: Database
    sessions: SessionStore
    audit: AuditLog
    memory: MemoryFile
    index: MemoryIndex

    @classmethod
    async def open(cls, settings: Settings, memory_vectors: bool) -> _Stores:
        masker = secret_masker(settings)
        db = await Database.open(settings.data_dir / "countbot.db")
        sessions = SessionStore(db)
        audit = AuditLog(settings.data_dir / "audit.jsonl", masker)
        memory = MemoryFile(settings.workspace / "MEMORY.md")
        index = await _memory_index(settings, sessions, memory_vectors)
        return cls(masker, db, sessions, audit, memory, index)


def _assemble(
    settings: Settings,
    features: Sequence[Feature],
    stores: _Stores,
    skills: SkillsLoader,
    sandbox: Sandbox,
    models: ModelResolver,
) -> Runtime:
    """The tools, the features' tools, the agent loop and MCP, over the opened stores."""
    workspace, masker, db, sessions = settings.workspace, stores.masker, stores.db, stores.sessions
    tool_calls, usage, audit = ToolCallLog(db), UsageLog(db), stores.audit
    outbound = OutboundRouter(outbox=ChannelOutbox(OutboxStore(db)))
    outbox = _RouterOutbox(outbound, settings, PairingStore(db), sessions)
    web_client = WebClient()
    tools = _tool_registry(settings, masker, skills, outbox, sandbox, sessions, web_client)
    _register_memory_tools(tools, workspace, stores.memory, stores.index)
    tools.gate = outbound_policy(settings, sessions, audit, tools)
    recorder = TurnRecorder(sessions, tool_calls, usage, audit, masker)
    loops = _loop_ports(settings, db, recorder, usage, masker, skills, stores.memory, models)
    ports = FeaturePorts(settings, db, sessions, outbound, tools, loops)
    _add_feature_tools(features, ports)
    rules = ApprovalRules(db)
    mcp = mcp_manager(settings, tools, sandbox, ask_to_start=rules.allows)
    mcp.start()  # in the background: nothing waits for the servers
    return Runtime(
        settings,
        masker,
        db,
        sessions,
        tool_calls,
        usage,
        audit,
        stores.memory,
        stores.index,
        skills,
        loops.personas,
        tools,
        _agent_loop(settings, ports, stores.index),
        outbound,
        sandbox,
        ApprovalBroker(rules, audit, lambda: settings.tools.exec.approval_timeout),
        loops.models,
        mcp,
        MediaReader(settings.transcription),
        web_client,
        ports,
    )


def _loop_ports(
    settings: Settings,
    db: Database,
    recorder: TurnRecorder,
    usage: UsageLog,
    masker: SecretMasker,
    skills: SkillsLoader,
    memory: MemoryFile,
    models: ModelResolver,
) -> LoopPorts:
    """What every agent loop (the assistant's and each subagent's) is built from."""
    return LoopPorts(
        models=models,
        personas=PersonaLoader(settings.personas_dir or SHIPPED_ROOT / "personas"),
        skills=skills,
        memory=memory,
        recorder=recorder,
        spending=BudgetGuard(lambda: settings.budget, usage, DailyCounters(db)),
        masker=masker,
        tokens=TokenProcess(),
    )


async def _memory_index(settings: Settings, sessions: SessionStore, vectors: bool) -> MemoryIndex:
    """The memory index, open and catching up with the files and the store in the background."""
    embedder = embedder_for(settings.memory) if vectors else None
    index = await MemoryIndex.open(
        settings.data_dir / INDEX_FILE, settings.workspace, sessions, embedder
    )
    index.start()
    return index


def _add_feature_tools(features: Sequence[Feature], ports: FeaturePorts) -> None:
    """Every feature's tools join the registry, in the order the surface gave the features."""
    for feature in features:
        for tool in feature.tools(ports):
            ports.tools.register(tool)


def _agent_loop(settings: Settings, ports: FeaturePorts, index: MemoryIndex) -> AgentLoop:
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
        secrets=lambda: [secret.get_secret_value() for secret in _secrets(settings)],
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


def skills_loader(settings: Settings) -> SkillsLoader:
    """The shipped skills and the workspace's own, with the switches and config of `settings`."""
    return SkillsLoader(
        settings.skills_dir or SHIPPED_ROOT / "skills",
        settings.workspace / "skills",
        disabled=settings.skills.disabled,
        has_config=lambda key: setting_is_set(settings, key),
    )


def setting_is_set(settings: Settings, key: str) -> bool:
    """Whether the dotted settings `key` has a non-empty value (a skill's `requires.config`)."""
    value: Any = settings
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else getattr(value, part, None)
        if value is None:
            return False
    return bool(value.get_secret_value() if isinstance(value, SecretStr) else value)


def exec_sandbox(settings: Settings, skills: SkillsLoader | None) -> Sandbox:
    """The probed sandbox `exec` runs in; CountBot's own data and config are hidden in it too.

    Blocking (it runs bwrap once): call it in a worker thread.
    """
    hidden = [settings.data_dir, *config_files(settings)]
    sandbox = Sandbox(
        settings.tools.exec.sandbox,
        settings.workspace,
        network=settings.tools.exec.network,
        hidden=hidden,
        skill_env=skills.env_names if skills is not None else None,
    )
    sandbox.probe()
    return sandbox


async def probe_mcp_servers(
    settings: Settings, names: Sequence[str], wait: float
) -> list[dict[str, Any]]:
    """Connect to the named servers outside a daemon (`countbot mcp list/test`) and report them.

    Each gets up to `wait` seconds to connect; the servers are stopped again before returning.
    """
    servers = {
        name: replaced(server, enabled=True)
        for name, server in settings.mcp.servers.items()
        if name in names
    }
    # The servers run in the workspace (and the sandbox binds it): it must exist.
    await asyncio.to_thread(seed_workspace, settings.workspace)
    sandbox = await asyncio.to_thread(exec_sandbox, settings, None)
    probe = replaced(settings, mcp=McpSettings(servers=servers))
    manager = mcp_manager(probe, ToolRegistry(), sandbox)
    manager.start()
    try:
        await asyncio.gather(*(c.wait_ready(wait) for c in manager.connections.values()))
        return manager.status()
    finally:
        await manager.close()


def _tool_registry(
    settings: Settings,
    masker: SecretMasker,
    skills: SkillsLoader,
    outbox: Outbox,
    sandbox: Sandbox,
    archive: ResultArchive,
    web_client: WebClient,
) -> ToolRegistry:
    registry = ToolRegistry(
        default_timeout=settings.agent.tool_timeout,
        max_retries=settings.agent.max_retries,
        retry_delay=settings.agent.retry_delay,
        masker=masker,
    )
    workspace, sensitive = settings.workspace, config_files(settings)
    for tool in builtin_tools(
        settings.tools,
        workspace,
        sensitive_paths=sensitive,
        masker=masker,
        sandbox=sandbox,
        web_client=web_client,
    ):
        registry.register(tool)
    for tool in (
        ReadSkillTool(skills),
        ReadResultTool(registry, archive),
        # Files leave the machine: always confined to the workspace, whatever the file tools may.
        MessageTool(outbox, WorkspaceGuard(workspace, sensitive_paths=sensitive)),
    ):
        registry.register(tool)
    return registry


def _register_memory_tools(
    registry: ToolRegistry, workspace: Path, memory: MemoryFile, index: MemoryIndex
) -> None:
    """The memory tools, searching and forgetting through the index."""
    files = [memory, MemoryFile(workspace / "USER.md")]
    for tool in (
        MemoryReadTool(memory),
        MemoryWriteTool(memory),
        MemorySearchTool(memory, index),
        MemoryForgetTool(files, index),
    ):
        registry.register(tool)


# Sessions that are not the user's conversation: their summaries stay out of MEMORY.md.
_UNATTENDED_SESSIONS = ("cron:", "heartbeat", "subagent:")


def is_users_conversation(session_id: str) -> bool:
    """Whether a session's overflow summary belongs in the user's MEMORY.md."""
    return not session_id.startswith(_UNATTENDED_SESSIONS)


@dataclass(frozen=True, slots=True)
class _RouterOutbox:
    """The `message` tool's view of the outbound router and of the owner's chats."""

    router: OutboundRouter
    settings: Settings
    pairing: PairingStore
    sessions: SessionStore

    async def deliver(
        self, channel: str, chat_id: str, text: str, files: Sequence[Path]
    ) -> DeliveryResult:
        return await self.router.deliver(DeliveryTarget(channel, chat_id), text, files)

    def channels(self) -> list[str]:
        return self.router.channels()

    async def knows(self, channel: str, chat_id: str) -> bool:
        """Named in the channel's allow-list (not by "*"), paired, or a chat with a session."""
        allow_from = getattr(getattr(self.settings.channels, channel, None), "allow_from", [])
        listed = {entry.strip().lstrip("@").lower() for entry in allow_from}
        # A thread (e-mail, Slack) is `<chat>/<thread>`: the chat is what the list names.
        if chat_id.split("/", 1)[0].lower() in listed:
            return True
        if await self.pairing.is_paired(channel, chat_id):
            return True
        return await self.sessions.get(f"{channel}:{chat_id}") is not None
