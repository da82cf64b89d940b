"""What a turn writes down: every finished entry, every tool call, the usage of side calls.

Each finished entry is stored through the `EntryLog` as it happens (so a crash loses at most
the text still streaming), an answer with its cost; tool calls and side calls go to the
caller's `AgentHooks`. A hook that fails is logged and never takes the turn down; a turn whose
entries could not be stored (a full disk) ends with `NotSavedError` at its next write, rather
than looking done while nothing of it was kept. The user's entry is committed while the turn's
first model call goes out (`add_soon`): every later write, and so every turn ending, waits for
it first, so the session keeps its order and a turn never ends with its message unstored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from countbot.agent.history import AssistantEntry, HistoryEntry, to_record
from countbot.agent.ports import AgentHooks, EntryLog, ToolCallRecord
from countbot.llm.types import Usage
from countbot.tools.base import ToolResult

log = logging.getLogger(__name__)


class NotSavedError(Exception):
    """An entry of the turn could not be stored; the message says so in the owner's words."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(
            f"This turn could not be saved ({cause}): the disk may be full or not writable. "
            "Nothing half-written was kept; free some space and send it again."
        )


@dataclass(frozen=True, slots=True)
class Journal:
    """One turn's writer: `session_id`'s entries, and the audit of the tools `user_text` ran.
    Its answers' cost counts against `spends_for` (a subagent's: its conversation's session)."""

    sessions: EntryLog
    hooks: AgentHooks
    session_id: str
    user_text: str
    channel: str | None
    spends_for: str
    # Writes started by `add_soon` that may still run, and why an entry was not stored (the
    # mutable parts).
    _started: list[asyncio.Task[None]] = field(default_factory=list)
    _unsaved: list[BaseException] = field(default_factory=list)

    async def commit(self, entry: HistoryEntry) -> None:
        """Store `entry`; NotSavedError when it, or an entry before it, could not be."""
        await self.settled()
        await self._store(entry)
        self._raise_unsaved()

    async def _store(self, entry: HistoryEntry) -> None:
        charge = None
        if isinstance(entry, AssistantEntry) and entry.usage.total_tokens:
            charge = entry.usage.charged_to(self.spends_for, entry.model)
        try:
            await self.sessions.append(self.session_id, to_record(entry), charge=charge)
        except Exception as exc:
            log.exception("storing an entry of session %s failed", self.session_id)
            self._unsaved.append(exc)

    def _raise_unsaved(self) -> None:
        if self._unsaved:
            raise NotSavedError(self._unsaved[0])

    async def add(self, entry: HistoryEntry) -> HistoryEntry:
        """`entry` committed (returned, for chaining)."""
        await self.commit(entry)
        return entry

    def add_soon(self, entry: HistoryEntry) -> HistoryEntry:
        """`entry` with its commit started but not awaited: the database thread stores it while
        the turn goes on to its model call (one hand-off less on the turn's path). The commit
        runs in a task of its own, so a turn cancelled meanwhile still stores it."""
        earlier = tuple(task for task in self._started if not task.done())
        self._started.append(asyncio.create_task(_after(earlier, self._store(entry))))
        return entry

    async def settled(self) -> None:
        """Wait for the writes started by `add_soon` (shielded: a cancelled turn does not
        cancel them); NotSavedError when one of them could not store its entry."""
        for task in tuple(self._started):
            await asyncio.shield(task)
        self._started[:] = [task for task in self._started if not task.done()]
        self._raise_unsaved()

    async def audit(
        self, call_id: str, name: str, arguments: dict[str, Any] | str, result: ToolResult
    ) -> None:
        await self.settled()
        await _call(self.hooks.on_tool_call, self._record(call_id, name, arguments, result))

    def _record(
        self, call_id: str, name: str, arguments: dict[str, Any] | str, result: ToolResult
    ) -> ToolCallRecord:
        return ToolCallRecord(
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

    async def audit_flush(self, call_id: str, arguments: str, result: ToolResult) -> None:
        """Audits a memory write of the silent flush before a summary (never shown)."""
        await self.audit(call_id, "memory_write", arguments, result)

    async def report_usage(self, model: str, usage: Usage, purpose: str) -> None:
        """Usage of a model call no history entry carries (the flush, a summary), made for
        `purpose`."""
        await self.settled()
        await _call(self.hooks.on_usage, self.session_id, model, usage, purpose)


async def _after(earlier: tuple[asyncio.Task[None], ...], write: Awaitable[None]) -> None:
    """`write` once the writes started before it are done (the session keeps its order)."""
    for task in earlier:
        await task
    await write


async def _call(hook: Callable[..., Awaitable[Any]] | None, *args: Any) -> None:
    if hook is None:
        return
    try:
        await hook(*args)
    except Exception:
        log.exception("agent hook %s failed", getattr(hook, "__name__", hook))
