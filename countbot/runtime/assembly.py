"""Builds one CountBot runtime from settings: storage, tools, context, model and the agent loop.

The CLI and the daemon both start from here, so there is exactly one way the pieces are wired.
`open_runtime` opens what every surface uses from the start (the store, the memory index, the
skills, the sandbox, the model resolver, the delivery router); the turn machinery (tools, agent
loop, MCP: `runtime/turn_parts.py`) is built with it, or, for the daemon, at its first turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from countbot.agent.personas import PersonaLoader
from countbot.common.masking import SecretMasker
from countbot.config.agent_view import agent_data_dir, agent_secrets
from countbot.config.secret import SecretStr
from countbot.config.settings import MAIN, McpSettings, Settings
from countbot.config.structs import replaced
from countbot.execution.sandbox import Sandbox
from countbot.memory.memory_file import MemoryFile
from countbot.memory_index.assembly import INDEX_FILE, embedder_for, kept_out_for
from countbot.memory_index.index import MemoryIndex
from countbot.runtime.approvals import ApprovalBroker
from countbot.runtime.deliveries import DeliveryRouter
from countbot.runtime.features import Feature, SharedPorts
from countbot.runtime.models import SettingsModelResolver
from countbot.runtime.outbox import ChannelOutbox
from countbot.runtime.paths import SHIPPED_ROOT, seed_workspace
from countbot.runtime.sensitive import private_paths, secret_masker
from countbot.skills.loader import SkillsLoader
from countbot.store.approval_rules import ApprovalRules
from countbot.store.audit import AuditLog
from countbot.store.database import Database
from countbot.store.outbox import OutboxStore
from countbot.store.sessions import SessionStore
from countbot.store.tool_calls import ToolCallLog
from countbot.store.usage import UsageLog

if TYPE_CHECKING:
    from countbot.agent.loop import AgentLoop
    from countbot.mcp.manager import McpManager
    from countbot.media.reader import MediaReader
    from countbot.runtime.turn_parts import TurnParts
    from countbot.tools.registry import ToolRegistry

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Runtime:
    """Everything a surface needs; close it to flush the store and the audit log.

    The tools, the agent loop and MCP (`turn_parts`) exist once built: at `open_runtime`, or,
    when it was asked to defer them (the daemon), at the first `turn_parts()` or turn.
    """

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
    deliveries: DeliveryRouter
    sandbox: Sandbox
    approvals: ApprovalBroker
    models: SettingsModelResolver
    # What features take from the runtime from the start.
    ports: SharedPorts
    features: Sequence[Feature] = ()
    # The agent whose house this is (`countbot/agents/`); `settings` is that agent's view.
    name: str = MAIN
    # Opened over another runtime's store and audit log (another agent's house): closing it
    # leaves them open.
    borrowed: bool = False
    _parts: TurnParts | None = None
    _building: asyncio.Future[TurnParts] | None = None
    _media: MediaReader | None = None

    async def turn_parts(self) -> TurnParts:
        """The turn machinery, built at the first call (its modules imported and its objects
        made in a worker thread, so the event loop keeps serving); every caller meanwhile waits
        for the same build."""
        if self._parts is not None:
            return self._parts
        # A caller that stops waiting (a cancelled turn) leaves the build to the others.
        return await asyncio.shield(self._start_build())

    def prepare_turns(self) -> None:
        """Start building the turn machinery and resolving the model in the background, if not
        yet (a chat client has connected: its first turn should not wait for either)."""
        if self._parts is None and self._building is None:
            self._start_build()
            self.models.prepare()

    def _start_build(self) -> asyncio.Future[TurnParts]:
        if self._building is None:
            self._building = asyncio.ensure_future(self._build())
            self._building.add_done_callback(self._after_build)
        return self._building

    def _after_build(self, building: asyncio.Future[TurnParts]) -> None:
        if building.cancelled() or building.exception() is not None:
            self._building = None  # the next turn tries again, and says why if it fails again
            if not building.cancelled():
                log.warning("building the turn machinery failed", exc_info=building.exception())

    async def _build(self) -> TurnParts:
        parts = await asyncio.to_thread(_build_parts, self)
        parts.mcp.start()  # its servers' tasks run on the event loop; nothing waits for them
        self._parts = parts
        return parts

    async def loop(self) -> AgentLoop:
        """The agent loop, its turn machinery built at the first call."""
        return (await self.turn_parts()).agent

    @property
    def parts(self) -> TurnParts:
        """The built turn machinery (`turn_parts()` builds it)."""
        if self._parts is None:
            raise RuntimeError("the turn machinery is not built yet: await turn_parts() first")
        return self._parts

    @property
    def agent(self) -> AgentLoop:
        return self.parts.agent

    @property
    def tools(self) -> ToolRegistry:
        return self.parts.tools

    @property
    def mcp(self) -> McpManager:
        return self.parts.mcp

    @property
    def media(self) -> MediaReader:
        """Voice notes and documents received on channels or uploaded in the web UI, read as
        text; made at the first file (what imports it, the channels' media intake, is loaded
        in a worker thread)."""
        if self._media is None:
            from countbot.media.reader import MediaReader

            self._media = MediaReader(self.settings.transcription)
        return self._media

    def mcp_status(self) -> list[dict[str, Any]]:
        """Each configured MCP server's state; before the machinery is built (it starts the
        servers), each enabled one is on its way."""
        if self._parts is not None:
            return self._parts.mcp.status()
        return [
            {
                "name": name,
                "transport": "stdio" if server.command else "http",
                "target": server.command or server.url,
                "enabled": server.enabled,
                "state": "connecting" if server.enabled else "disabled",
                "approval": server.approval,
                "tools": [],
                "skipped": {},
                "last_error": "",
                "restarts": 0,
            }
            for name, server in self.settings.mcp.servers.items()
        ]

    async def apply_mcp(self, mcp: McpSettings) -> None:
        """Follow a changed `mcp` section (`settings.mcp` already holds it): the running servers
        change, or, before the machinery is built, it is built now if a server is to run."""
        if self._parts is not None:
            await self._parts.mcp.apply(mcp)
        elif any(server.enabled for server in mcp.servers.values()):
            self.prepare_turns()

    async def close(self) -> None:
        if self._building is not None:  # a build under way finishes (its thread cannot stop)
            await asyncio.wait({self._building})
        if self._parts is not None:
            await self._parts.close()
        await self.memory_index.close()
        await self.models.aclose()
        if not self.borrowed:
            await self.audit.close()
            await self.db.close()


def _build_parts(runtime: Runtime) -> TurnParts:
    """Import the turn machinery and make it (the features' tool modules are imported there
    too): objects only, no work on the event loop. Blocking: call it in a worker thread."""
    from countbot.runtime.turn_parts import build_turn_parts

    return build_turn_parts(runtime, runtime.features)


async def open_runtime(
    settings: Settings,
    features: Sequence[Feature] = (),
    *,
    memory_vectors: bool = False,
    prepare_model: bool = False,
    defer_turns: bool = False,
    name: str = MAIN,
) -> Runtime:
    """Open the store, seed the workspace, bind the `features` and (unless `defer_turns`)
    build the turn machinery with their tools.

    `memory_vectors`: the memory index makes and searches embeddings (the daemon); a short-lived
    process (`chat -m`, a job run from the CLI) searches full-text only and never loads the model.
    `prepare_model`: resolve the model and open its HTTP client in the background from the start
    (`SettingsModelResolver.prepare`), for a process that calls the model at once (`chat -m`).
    `defer_turns`: build the tools, the agent loop and MCP at the first turn instead (the daemon:
    an idle one never imports them). Every tool is registered at that build, before the loop is
    made (MCP servers' tools join and leave later as their servers do).
    `name`: the agent whose house this is (`settings` is its view: `config/agent_view.py`).
    """
    models = SettingsModelResolver(lambda: settings.model, settings.data_dir)
    if prepare_model:
        models.prepare()
    try:
        await asyncio.to_thread(seed_workspace, settings.workspace)
        skills = skills_loader(settings)
        # Probing runs bwrap once (in a worker thread): while the store and index open.
        stores, sandbox, _ = await asyncio.gather(
            _Stores.open(settings, memory_vectors, name),
            asyncio.to_thread(exec_sandbox, settings, skills),
            _import_turn_parts(not defer_turns),
        )
    except BaseException:
        await models.aclose()
        raise
    runtime = _runtime(settings, features, stores, skills, sandbox, models, name)
    for feature in features:
        feature.bind(runtime.ports)
    if not defer_turns:
        await runtime.turn_parts()
    return runtime


async def open_house(
    main: Runtime, settings: Settings, name: str, features: Sequence[Feature] = ()
) -> Runtime:
    """Another agent's house in the daemon: its own workspace, memory file and index, skills,
    personas, sandbox and model, over `main`'s store, audit log, delivery router and approvals.
    Its turn machinery is built at its first turn, with the tools of `features` (already bound
    to `main`'s ports; each makes its tools for the agent its `FeaturePorts` name)."""
    models = SettingsModelResolver(lambda: settings.model, settings.data_dir)
    try:
        await asyncio.to_thread(seed_workspace, settings.workspace)
        skills = skills_loader(settings)
        memory = MemoryFile(settings.workspace / "MEMORY.md")
        index, sandbox = await asyncio.gather(
            _memory_index(settings, main.sessions, main.memory_index.vectors is not None, name),
            asyncio.to_thread(exec_sandbox, settings, skills),
        )
    except BaseException:
        await models.aclose()
        raise
    stores = _Stores(main.masker, main.db, main.sessions, main.audit, memory, index)
    house = _runtime(settings, features, stores, skills, sandbox, models, name, main.deliveries)
    house.approvals = main.approvals
    house.borrowed = True
    return house


async def _import_turn_parts(now: bool) -> None:
    """Import the turn machinery `now` (in a worker thread), for a process that builds it at
    once: while the store and the index open, instead of after (~0.2 s of `chat -m`)."""
    if now:
        await asyncio.to_thread(_import_turn_parts_module)


def _import_turn_parts_module() -> None:
    """The turn machinery's module, imported (blocking: a worker thread)."""
    import countbot.runtime.turn_parts  # noqa: F401


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
    async def open(cls, settings: Settings, memory_vectors: bool, name: str) -> _Stores:
        masker = secret_masker(settings)
        db = await Database.open(settings.data_dir / "countbot.db")
        sessions = SessionStore(db)
        audit = AuditLog(settings.data_dir / "audit.jsonl", masker)
        memory = MemoryFile(settings.workspace / "MEMORY.md")
        index = await _memory_index(settings, sessions, memory_vectors, name)
        return cls(masker, db, sessions, audit, memory, index)


def _runtime(
    settings: Settings,
    features: Sequence[Feature],
    stores: _Stores,
    skills: SkillsLoader,
    sandbox: Sandbox,
    models: SettingsModelResolver,
    name: str,
    deliveries: DeliveryRouter | None = None,
) -> Runtime:
    """The runtime over the opened stores, its turn machinery not built yet."""
    db, sessions, audit = stores.db, stores.sessions, stores.audit
    deliveries = deliveries or DeliveryRouter(outbox=ChannelOutbox(OutboxStore(db)))
    return Runtime(
        settings,
        stores.masker,
        db,
        sessions,
        ToolCallLog(db),
        UsageLog(db),
        audit,
        stores.memory,
        stores.index,
        skills,
        PersonaLoader(settings.personas_dir or SHIPPED_ROOT / "personas"),
        deliveries,
        sandbox,
        ApprovalBroker(ApprovalRules(db), audit, lambda: settings.tools.exec.approval_timeout),
        models,
        SharedPorts(settings, db, sessions, deliveries, agent=name),
        features,
        name,
    )


async def _memory_index(
    settings: Settings, sessions: SessionStore, vectors: bool, name: str
) -> MemoryIndex:
    """Agent `name`'s memory index (its own file, its workspace and its own conversations),
    open and catching up with the files and the store in the background."""
    embedder = embedder_for(settings.memory) if vectors else None
    folder = agent_data_dir(settings, name)
    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    index = await MemoryIndex.open(
        folder / INDEX_FILE,
        settings.workspace,
        sessions,
        embedder,
        kept_out_for(settings.memory, name),
    )
    index.start()
    return index


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
    hidden = [settings.data_dir, *private_paths(settings)]
    sandbox = Sandbox(
        settings.tools.exec.sandbox,
        settings.workspace,
        network=settings.tools.exec.network,
        hidden=hidden,
        skill_env=skills.env_names if skills is not None else None,
        secrets=agent_secrets(settings, settings.workspace),
    )
    sandbox.probe()
    return sandbox


async def probe_mcp_servers(
    settings: Settings, names: Sequence[str], wait: float
) -> list[dict[str, Any]]:
    """Connect to the named servers outside a daemon (`countbot mcp list/test`) and report them.

    Each gets up to `wait` seconds to connect, and is reported as soon as its first attempt
    ended; the servers are stopped again before returning.
    """
    from countbot.runtime.turn_parts import mcp_manager
    from countbot.tools.registry import ToolRegistry

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
        await asyncio.gather(*(c.wait_tried(wait) for c in manager.connections.values()))
        return manager.status()
    finally:
        await manager.close()
