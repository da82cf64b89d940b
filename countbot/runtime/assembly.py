"""Builds one CountBot runtime from settings: storage, tools, context, model and the agent loop.

The CLI and the daemon both start from here, so there is exactly one way the pieces are wired.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, SecretStr

from countbot.agent.context import ContextBuilder
from countbot.agent.loop import AgentLoop
from countbot.agent.overflow import OverflowSummarizer
from countbot.agent.persona import PersonaLoader
from countbot.config.secrets_file import secrets_path
from countbot.config.settings import Settings
from countbot.masking import SecretMasker
from countbot.memory.memory_file import MemoryFile
from countbot.runtime.approvals import ApprovalBroker
from countbot.runtime.models import ModelResolver
from countbot.runtime.outbound import DeliveryResult, DeliveryTarget, OutboundRouter
from countbot.runtime.paths import SHIPPED_ROOT, seed_workspace
from countbot.runtime.persistence import TurnRecorder
from countbot.skills.loader import SkillsLoader
from countbot.store.approval_rules import ApprovalRules
from countbot.store.audit import AuditLog
from countbot.store.database import Database
from countbot.store.sessions import SessionStore
from countbot.store.tool_calls import ToolCallLog
from countbot.store.usage import UsageLog
from countbot.tools.builtin import builtin_tools
from countbot.tools.memory_tools import MemoryReadTool, MemorySearchTool, MemoryWriteTool
from countbot.tools.message_tool import MessageTool, Outbox
from countbot.tools.paging import ReadResultTool
from countbot.tools.registry import ToolRegistry
from countbot.tools.sandbox import Sandbox
from countbot.tools.skill_tools import ReadSkillTool
from countbot.tools.workspace_guard import WorkspaceGuard


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
    skills: SkillsLoader
    personas: PersonaLoader
    tools: ToolRegistry
    agent: AgentLoop
    outbound: OutboundRouter
    sandbox: Sandbox
    approvals: ApprovalBroker
    models: ModelResolver

    async def close(self) -> None:
        await self.models.aclose()
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


def _secrets(model: BaseModel) -> Iterator[SecretStr]:
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, SecretStr):
            yield value
        elif isinstance(value, BaseModel):
            yield from _secrets(value)


async def open_runtime(settings: Settings) -> Runtime:
    """Open the store, seed the workspace and assemble the agent loop."""
    workspace = settings.workspace
    await asyncio.to_thread(seed_workspace, workspace)
    masker = secret_masker(settings)
    db = await Database.open(settings.data_dir / "countbot.db")
    sessions = SessionStore(db)
    tool_calls, usage = ToolCallLog(db), UsageLog(db)
    audit = AuditLog(settings.data_dir / "audit.jsonl", masker)
    memory = MemoryFile(workspace / "MEMORY.md")
    skills = SkillsLoader(
        settings.skills_dir or SHIPPED_ROOT / "skills",
        workspace / "skills",
        disabled=settings.skills.disabled,
    )
    personas = PersonaLoader(settings.personas_dir or SHIPPED_ROOT / "personas")
    outbound = OutboundRouter()
    # Probing runs bwrap once (and resolves paths): a worker thread's job, not the loop's.
    sandbox = await asyncio.to_thread(exec_sandbox, settings, skills)
    tools = _tool_registry(
        settings, workspace, masker, memory, skills, _RouterOutbox(outbound), sandbox
    )
    context = ContextBuilder(
        workspace=workspace,
        persona_loader=personas,
        persona_settings=settings.persona,
        skills=skills,
        memory=memory,
        timezone=settings.timezone,
        tool_names=tools.names(),
    )
    recorder = TurnRecorder(sessions, tool_calls, usage, audit, masker)
    models = ModelResolver(lambda: settings.model, settings.data_dir)
    agent = AgentLoop(
        resolve_model=models,
        context=context,
        tools=tools,
        history=sessions,
        summarizer=OverflowSummarizer(sessions, memory, settings.agent.max_history),
        settings=settings.agent,
        workspace=workspace,
        hooks=recorder.hooks(),
    )
    return Runtime(
        settings,
        masker,
        db,
        sessions,
        tool_calls,
        usage,
        audit,
        memory,
        skills,
        personas,
        tools,
        agent,
        outbound,
        sandbox,
        ApprovalBroker(ApprovalRules(db), audit, lambda: settings.tools.exec.approval_timeout),
        models,
    )


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


def _tool_registry(
    settings: Settings,
    workspace: Path,
    masker: SecretMasker,
    memory: MemoryFile,
    skills: SkillsLoader,
    outbox: Outbox,
    sandbox: Sandbox,
) -> ToolRegistry:
    registry = ToolRegistry(
        default_timeout=settings.agent.tool_timeout,
        max_retries=settings.agent.max_retries,
        retry_delay=settings.agent.retry_delay,
        masker=masker,
    )
    sensitive = config_files(settings)
    for tool in builtin_tools(
        settings.tools, workspace, sensitive_paths=sensitive, masker=masker, sandbox=sandbox
    ):
        registry.register(tool)
    for tool in (
        MemoryReadTool(memory),
        MemoryWriteTool(memory),
        MemorySearchTool(memory),
        ReadSkillTool(skills),
        ReadResultTool(registry),
        # Files leave the machine: always confined to the workspace, whatever the file tools may.
        MessageTool(outbox, WorkspaceGuard(workspace, sensitive_paths=sensitive)),
    ):
        registry.register(tool)
    return registry


class _RouterOutbox:
    """The `message` tool's view of the outbound router (tools know no runtime types)."""

    def __init__(self, router: OutboundRouter) -> None:
        self._router = router

    async def deliver(
        self, channel: str, chat_id: str, text: str, files: Sequence[Path]
    ) -> DeliveryResult:
        return await self._router.deliver(DeliveryTarget(channel, chat_id), text, files)

    def channels(self) -> list[str]:
        return self._router.channels()
