"""The newest records of recently active sessions, kept decoded between turns.

Every turn reads its session's window (`SessionStore.load_window`); without this cache that is a
hand-off to the database thread, a query and a JSON decode of every record, each turn. The cache
is filled by that read and kept up to date by `SessionStore.append` (the record as stored), and a
session's entry is dropped by every change that is not an append at its end (rewind, delete, a
summary mark). The database stays the source of truth: an entry is trusted only while no other
connection wrote to the file since it was filled (`Database.outside_writes`), and it is bounded
in sessions and bytes, the least recently used going first.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

# Sessions kept, and the stored JSON bytes their records may add up to.
CACHED_SESSIONS = 16
CACHED_BYTES = 4 << 20


@dataclass(slots=True)
class _Entry:
    summary: str | None
    # The newest unsummarized records (oldest first) and each one's stored size.
    records: list[dict[str, Any]]
    sizes: list[int]
    # Whether `records` are all the unsummarized records of the session.
    complete: bool
    # The most records a read asked for: an append keeps no more than that.
    keep: int
    # `Database.outside_writes` when it was filled.
    generation: int
    size: int = field(init=False)

    def __post_init__(self) -> None:
        self.size = sum(self.sizes)


class WindowCache:
    """Recent windows by session; see the module docstring."""

    def __init__(self, sessions: int = CACHED_SESSIONS, max_bytes: int = CACHED_BYTES) -> None:
        self._sessions = sessions
        self._max_bytes = max_bytes
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0

    def get(
        self, session_id: str, limit: int, generation: int
    ) -> tuple[list[dict[str, Any]], str | None] | None:
        """The newest `limit` records and the summary, or None when the cache cannot tell."""
        entry = self._entries.get(session_id)
        if entry is None or entry.generation != generation:
            return None
        if not entry.complete and len(entry.records) < limit:
            return None
        self._entries.move_to_end(session_id)
        return (entry.records[-limit:] if limit else []), entry.summary

    def fill(
        self,
        session_id: str,
        records: list[dict[str, Any]],
        sizes: list[int],
        summary: str | None,
        limit: int,
        generation: int,
    ) -> None:
        """Keep what a read of the newest `limit` records returned."""
        self.drop(session_id)
        entry = _Entry(summary, list(records), sizes, len(records) < limit, limit, generation)
        self._entries[session_id] = entry
        self._bytes += entry.size
        self._evict()

    def appended(self, session_id: str, record: dict[str, Any], size: int) -> None:
        """A record was committed at the end of the session's log."""
        entry = self._entries.get(session_id)
        if entry is None:
            return
        entry.records.append(record)
        entry.sizes.append(size)
        entry.size += size
        self._bytes += size
        while len(entry.records) > entry.keep:
            del entry.records[0]
            entry.size -= entry.sizes[0]
            self._bytes -= entry.sizes.pop(0)
            entry.complete = False
        self._evict()

    def drop(self, session_id: str) -> None:
        """Forget the session (its log changed other than by an append)."""
        entry = self._entries.pop(session_id, None)
        if entry is not None:
            self._bytes -= entry.size

    def _evict(self) -> None:
        while self._entries and (
            len(self._entries) > self._sessions or self._bytes > self._max_bytes
        ):
            _, entry = self._entries.popitem(last=False)
            self._bytes -= entry.size
