"""What the agent needs from the layers around it, as small protocols the caller implements.

The agent never imports storage: the runtime passes a `SessionHistory` to read from, a
`EntryLog` to store the turn's entries in and `AgentHooks` that audit its tool calls and count
its side calls.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from countbot.common.authorship import Part, Said
from countbot.common.charge import Charge
from countbot.llm.types import Usage


class HistoryWindow(Protocol):
    """The recent, not-yet-summarized records (oldest first, each with an integer `id`)."""

    records: list[dict[str, Any]]
    summary: str | None


class SessionHistory(Protocol):
    def cached_window(self, session_id: str, limit: int) -> HistoryWindow | None:
        """`load_window`'s answer when it is at hand without I/O, else None."""
        ...

    async def load_window(self, session_id: str, limit: int) -> HistoryWindow:
        """The newest `limit` unsummarized records and the session's running summary."""
        ...

    async def load_unsummarized(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        """The oldest `limit` unsummarized records, oldest first."""
        ...

    async def mark_summarized(self, session_id: str, through_id: int, summary: str) -> None:
        """Records up to `through_id` are now covered by `summary` (the new running summary)."""
        ...


class EntryLog(Protocol):
    """Where a turn's entries are stored, in order (the store's `SessionStore`)."""

    async def append(
        self, session_id: str, record: dict[str, Any], *, charge: Charge | None = None
    ) -> int:
        """Commit `record` (a history entry's `to_record`) with the usage row of `charge`, the
        answer's cost, in one transaction; the new record's id."""
        ...


class MemoryRecall(Protocol):
    """Finds what memory holds about a turn's message (the memory index's auto-recall)."""

    def searches(self, query: str) -> bool:
        """Whether `query` has anything to look for (a greeting has not): the turn starts no
        search for one that has not."""
        ...

    async def recall(self, query: str, session_id: str) -> Part | None:
        """The recalled block to send with the message as one of its parts, or None."""
        ...


class SteeringInbox(Protocol):
    """Messages that arrived mid-turn in "steer" mode, injected before the next model call."""

    def pending(self) -> bool: ...

    def drain(self) -> list[Said]:
        """Each waiting message: its text, the context its surface added, who wrote it and
        what came with it."""
        ...


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One executed tool call, for the audit log and the queryable tool history."""

    session_id: str
    tool_call_id: str
    name: str
    arguments: dict[str, Any] | str
    user_message: str
    result: str
    status: str
    duration_ms: float
    channel: str | None = None


@dataclass(frozen=True, slots=True)
class SpendCheck:
    """A budget's verdict on the next model call: `stop` ends the turn with that notice first;
    `economy` names the cheaper model the turn should use instead (with `economy_notice` the
    first time in the conversation that day)."""

    stop: str | None = None
    warning: str | None = None
    economy: str | None = None
    economy_notice: str | None = None


class SpendingGuard(Protocol):
    def limited(self) -> bool:
        """Whether any limit is set: then the next call's tokens must be counted exactly."""
        ...

    async def check(
        self, session_id: str, model: str, turn_tokens: int, next_tokens: int
    ) -> SpendCheck:
        """Whether a call of about `next_tokens` prompt tokens may go out now."""
        ...


@dataclass(slots=True)
class AgentHooks:
    """Callbacks the caller injects; each is awaited and its failure is logged, never raised."""

    on_tool_call: Callable[[ToolCallRecord], Awaitable[None]] | None = None
    # Usage of model calls no history entry carries (the memory flush, summaries), with what
    # each was for: (session, model, usage, purpose).
    on_usage: Callable[[str, str, Usage, str], Awaitable[None]] | None = None
