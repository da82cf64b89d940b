"""What a turn writes down: every finished entry, every tool call, the usage of side calls.

Each goes to the caller's `AgentHooks` as it happens (so a crash loses at most the text still
streaming); a hook that fails is logged and never takes the turn down.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from countbot.agent.context.tokens import counted
from countbot.agent.history import HistoryEntry
from countbot.agent.ports import AgentHooks, ToolCallRecord
from countbot.llm.types import Usage
from countbot.tools.base import ToolResult

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Journal:
    """One turn's writer: `session_id`'s entries, and the audit of the tools `user_text` ran."""

    hooks: AgentHooks
    session_id: str
    user_text: str
    channel: str | None

    async def commit(self, entry: HistoryEntry) -> None:
        await _call(self.hooks.on_message, self.session_id, entry)

    async def add(self, entry: HistoryEntry, model: str) -> HistoryEntry:
        """`entry` counted once (for `model`'s tokenizer) and committed with its count."""
        entry = await counted(entry, model)
        await self.commit(entry)
        return entry

    async def audit(
        self, call_id: str, name: str, arguments: dict[str, Any] | str, result: ToolResult
    ) -> None:
        record = ToolCallRecord(
            session_id=self.session_id,
            tool_call_id=call_id,
            name=name,
            arguments=arguments,
            user_message=self.user_text,
            result=result.content,
            status=result.status,
            duration_ms=result.duration_ms,
            channel=self.channel,
        )
        await _call(self.hooks.on_tool_call, record)

    async def audit_flush(self, call_id: str, arguments: str, result: ToolResult) -> None:
        """Audits a memory write of the silent flush before a summary (never shown)."""
        await self.audit(call_id, "memory_write", arguments, result)

    async def report_usage(self, model: str, usage: Usage) -> None:
        """Usage of a model call no history entry carries (the flush, a summary)."""
        await _call(self.hooks.on_usage, self.session_id, model, usage)


async def _call(hook: Callable[..., Awaitable[Any]] | None, *args: Any) -> None:
    if hook is None:
        return
    try:
        await hook(*args)
    except Exception:
        log.exception("agent hook %s failed", getattr(hook, "__name__", hook))
