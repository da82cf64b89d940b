"""Following the sources: the index catches up with the memory files and the store.

Catching up is incremental: a committed message pokes the follower task, which reads the records
after the stored cursor once they settle; the store's forget log is applied in the same
transactions. The memory files are compared by size and mtime (and re-read only when they
changed, entry by entry) before every search.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from countbot.memory_index import index_db
from countbot.memory_index.scope import KeptOut
from countbot.memory_index.sources import Entry, MemoryPaths, file_entries, message_entries
from countbot.store.database import Database
from countbot.store.sessions import SessionStore, StoredMessage

log = logging.getLogger(__name__)

# Records read per catch-up transaction: bounded work per step.
MESSAGE_BATCH = 500
# A catch-up of this many full batches leaves as many full-text segments, each holding a part of
# a long session's token list too small to be skipped through: auto-recall's NOT of its own
# session then walks the session's every entry. Merged once after it.
MERGE_AFTER_BATCHES = 2
# Rows of the store's forget log applied per catch-up transaction.
FORGET_BATCH = 100
# The follower indexes once the store has had no new record for FOLLOW_QUIET seconds, or
# FOLLOW_LATEST seconds after a record came in: a burst of records (a turn's tool calls, many
# sessions at once) is read and indexed in one batch, not a round trip each, and not while a
# turn is still writing. A search or a status reads what is pending itself.
FOLLOW_QUIET = 0.2
FOLLOW_LATEST = 2.0

# A memory file a look found changed: its path, its text (None: gone) and its (mtime_ns, size).
Changed = tuple[Path, str | None, tuple[int, int]]


class SourceFollower:
    """Keeps the index's entries in step with the memory files and the store's records.

    `added` is told when entries were added (their vectors are due), `removed` the ids of
    entries deleted (their vectors leave the worker).
    """

    def __init__(
        self,
        db: Database,
        workspace: Path,
        sessions: SessionStore,
        kept_out: KeptOut,
        *,
        added: Callable[[], None],
        removed: Callable[[list[int]], None],
    ) -> None:
        self._db = db
        self._workspace = workspace
        self._paths = MemoryPaths(workspace)
        self._sessions = sessions
        self._kept_out = kept_out
        self._added = added
        self._removed = removed
        self._file_stamps: dict[Path, tuple[int, int]] = {}
        self.files_lock = asyncio.Lock()
        self.messages_lock = asyncio.Lock()
        self._poked = asyncio.Event()
        self._last_poke = 0.0  # time.monotonic() of the newest record appended
        self._cursor: int | None = None  # the last stored record indexed (None: read the file)
        # The last row of the store's forget log applied (None: read the file), and whether a
        # row was written since the log was last read: no search may run before it is applied.
        self._forgot: int | None = None
        self.forgets_pending = False
        # Sessions with records appended in this process and not indexed yet (the newest id), and
        # the store's count of other processes' writes when the log was last read through.
        self._pending: dict[str, int] = {}
        self._outside_seen = -1

    @property
    def last_record(self) -> float:
        """`time.monotonic()` when the store last committed a record or logged a forget (0:
        not in this process): how recently the daemon was busy with a turn."""
        return self._last_poke

    def behind(self, exclude_session: str | None) -> bool:
        """Whether the store may hold records, or forgets, a search leaving out
        `exclude_session` must see first."""
        return (
            self._cursor is None
            or self.forgets_pending
            or self._sessions.outside_writes != self._outside_seen
            or any(session != exclude_session for session in self._pending)
        )

    async def catch_up(self, exclude_session: str | None = None) -> None:
        """Index what changed in the memory files and the store since the last look (both looks
        at once: each has its own lock and cursor). The store's log is read only when it may
        hold records a search that leaves out `exclude_session` could find: a turn's own
        session is what the follower is usually still indexing."""
        looks = [self.sync_files()]
        if self.behind(exclude_session):
            looks.append(self.sync_messages())
        await asyncio.gather(*looks)

    def appended(self, session_id: str, message_id: int) -> None:
        """The store committed a record (its hook): follow it once records settle."""
        self._pending[session_id] = message_id
        self._last_poke = time.monotonic()
        self._poked.set()  # wakes the follower only if it waits for a first record

    def forget_logged(self) -> None:
        """The store logged something to forget: no search before it is applied, and the
        follower applies it now (its vectors leave the worker)."""
        self.forgets_pending = True
        self._last_poke = time.monotonic()
        self._poked.set()

    def reset(self) -> None:
        """Forget every cursor and stamp: the next catch-up reads everything (a rebuild)."""
        self._cursor = self._forgot = None
        self._file_stamps.clear()

    # --- the memory files ----------------------------------------------------------------------

    async def sync_files(self) -> None:
        await self.apply_files(await asyncio.to_thread(self.changed_files))

    async def apply_files(self, changed: list[Changed]) -> None:
        """Index the files a look found changed (one another look applied already is skipped)."""
        async with self.files_lock:
            for path, content, stamp in changed:
                if self._file_stamps.get(path) != stamp:
                    await self._index_file(path, content, stamp[0] / 1e9)
                    self._file_stamps[path] = stamp

    def changed_files(self) -> list[Changed]:
        """The files whose size or mtime moved (blocking: run on a thread)."""
        changed: list[Changed] = []
        for path in self._paths.now() | self._file_stamps.keys():
            try:
                stat = os.stat(path)
                stamp = (stat.st_mtime_ns, stat.st_size)
            except OSError:
                stamp = (0, -1)
            if self._file_stamps.get(path) == stamp:
                continue
            try:
                content: str | None = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                content = None
            changed.append((path, content, stamp))
        return changed

    async def _index_file(self, path: Path, content: str | None, mtime: float) -> None:
        relative = path.relative_to(self._workspace).as_posix()
        text = content or ""
        digest = hashlib.sha1(text.encode()).hexdigest()
        key = f"file:{relative}"
        if await self._db.run(index_db.get_state, key) == digest:
            return
        entries = file_entries(relative, text, mtime)
        added, removed = await self._db.run(
            index_db.replace_source, relative, entries, (key, digest)
        )
        self._removed(removed)
        if added:
            self._added()

    # --- the store's records -------------------------------------------------------------------

    async def sync_messages(self) -> int:
        """Apply the store's forget log and index the stored records after the cursors, a
        bounded batch per transaction; returns how many entries the forget log removed.

        The forget log's new rows are read before the records (a record a row removed is no
        longer among them) and applied in the transaction that indexes them, deletions first.
        The cursors are kept in memory between calls (the follower runs after every stored
        message): `add_messages` refuses a cursor another process moved, and then it is read
        again from the file.
        """
        async with self.messages_lock:
            outside, full, removed = self._sessions.outside_writes, 0, 0
            if self._cursor is None or self._forgot is None:
                self._cursor = await self._stored_cursor(index_db.MESSAGES_CURSOR)
                self._forgot = await self._stored_cursor(index_db.FORGETS_CURSOR)
            while True:
                self.forgets_pending = False  # a row logged from now on sets it again
                forgets = await self._sessions.forgets_after(self._forgot, FORGET_BATCH)
                found, through = await self._sessions.messages_after(self._cursor, MESSAGE_BATCH)
                if through == self._cursor and not forgets:
                    self._read_through(through, outside)
                    break
                added, dropped = await self._db.run(
                    index_db.catch_up, forgets, self._entries(found), self._cursor, through
                )
                self._removed(dropped)
                removed += len(dropped)
                if forgets:
                    self._forgot = forgets[-1].id
                if added is None:
                    self._cursor = await self._stored_cursor(index_db.MESSAGES_CURSOR)
                    continue
                self._cursor = through
                if added:
                    self._added()
                if len(found) < MESSAGE_BATCH and len(forgets) < FORGET_BATCH:
                    # Short batches were read through the newest rows: nothing is left.
                    self._read_through(through, outside)
                    break
                full += len(found) == MESSAGE_BATCH
            if full >= MERGE_AFTER_BATCHES:
                await self._db.run(index_db.merge_segments)
            return removed

    def _entries(self, found: list[StoredMessage]) -> list[Entry]:
        """The entries of the records read, but those of conversations kept out of memory."""
        return [
            entry
            for m in found
            if not self._kept_out.covers(m.session_id, m.channel, m.memory_off, m.agent)
            for entry in message_entries(
                m.id, m.session_id, m.channel, m.title, m.record, m.answering, m.after_tools
            )
        ]

    def _read_through(self, through: int, outside: int) -> None:
        """The log is indexed through message `through`, as of the store's `outside` count."""
        self._pending = {s: i for s, i in self._pending.items() if i > through}
        self._outside_seen = outside

    async def _stored_cursor(self, key: str) -> int:
        return int(await self._db.run(index_db.get_state, key) or 0)

    async def forget(self, text: str) -> int:
        """Drop conversation entries holding `text` now and when records are indexed again
        (logged in the store first: a kill before it is applied here does not undo it)."""
        await self._sessions.forget_text(text)
        return await self.sync_messages()

    # --- the follower task ---------------------------------------------------------------------

    async def follow(self) -> None:
        """Catch up once at start, then index stored messages as they settle; the memory files
        are looked at again before every search (a stat of each per look: not per message)."""
        self._poked.set()
        first = True
        while True:
            await self._poked.wait()
            if not first:
                await self._settle()
            self._poked.clear()
            try:
                await (self.catch_up() if first else self.sync_messages())
                first = False
            except Exception:
                log.exception("memory index catch-up failed; retrying at the next message")

    async def _settle(self) -> None:
        """Wait until no record came for FOLLOW_QUIET seconds, or FOLLOW_LATEST in all. A record
        coming meanwhile only moves `_last_poke`: the follower sleeps to the next deadline
        instead of waking for each one (two records a turn)."""
        latest = time.monotonic() + FOLLOW_LATEST
        while True:
            left = min(self._last_poke + FOLLOW_QUIET, latest) - time.monotonic()
            if left <= 0:
                return
            await asyncio.sleep(left)
