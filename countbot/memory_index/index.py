"""The memory index: catches up with the files and the store, and answers searches.

Catching up is incremental: a committed message pokes a follower task that reads the records
after the stored cursor; the memory files are compared by size and mtime before every search
(and re-read only when they changed, entry by entry). Vectors are made by a second task in
batches; until every entry has a vector of the configured model, search is full-text only, which
is also what happens after a model switch while the old vectors are replaced.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import sqlite3
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TypeVar

from countbot.authorship import OWNER, Author
from countbot.memory.cited import KINDS, CitedHit
from countbot.memory_index import index_db
from countbot.memory_index.embeddings import Embedder, EmbeddingError
from countbot.memory_index.fusion import fuse
from countbot.memory_index.index_db import Filters
from countbot.memory_index.scope import KeptOut
from countbot.memory_index.sources import MemoryPaths, file_entries, message_entries
from countbot.memory_index.text import content_units, match_expression
from countbot.memory_index.vector_process import VectorProcess
from countbot.store.database import Database, DatabaseClosedError
from countbot.store.sessions import SessionStore

log = logging.getLogger(__name__)

T = TypeVar("T")

# Records read per catch-up transaction, and entries embedded per request to the vector worker:
# bounded work per step, and a search waits for one request of ~0.1 s, not a whole backlog.
MESSAGE_BATCH = 500
# A catch-up of this many full batches leaves as many full-text segments, each holding a part of a
# long session's token list too small to be skipped through: auto-recall's NOT of its own session
# then walks the session's every entry (a cost at every turn, growing with them). Merged once after
# it.
MERGE_AFTER_BATCHES = 2
EMBED_BATCH = 32
# Rows of the store's forget log applied per catch-up transaction.
FORGET_BATCH = 100
# Candidates each side contributes to the fusion.
CANDIDATES = 50
# After the embedder fails, full-text carries on and vectors are retried this much later (s).
EMBED_RETRY = 60.0
# Vectors wait this long after a poke, so a burst of messages is embedded as one batch (s).
EMBED_DELAY = 0.5
# How long a search waits for the vector side (s): the first one after the worker ended starts
# it again (~1-2 s, more at 100,000 entries on a busy machine); past this it is full-text only,
# and the worker goes on starting for the next one.
SEARCH_WAIT = 10.0


MAX_QUERY_CHARS = 4_000
# Sessions whose being kept out of memory is remembered (`kept_out`) before the answers are
# read again.
SCOPES_REMEMBERED = 4_096
# The follower indexes once the store has had no new record for FOLLOW_QUIET seconds, or
# FOLLOW_LATEST seconds after a record came in: a burst of records (a turn's tool calls, many
# sessions at once) is read and indexed in one batch, not a round trip each, and not while a
# turn is still writing. A search or a status reads what is pending itself.
FOLLOW_QUIET = 0.2
FOLLOW_LATEST = 2.0


class MemoryIndex:
    """See the module docstring; open with `await MemoryIndex.open(...)`, then `start()`."""

    def __init__(
        self,
        db: Database,
        workspace: Path,
        sessions: SessionStore,
        embedder: Embedder | None,
        vectors: VectorProcess | None = None,
        kept_out: KeptOut | None = None,
    ) -> None:
        self._db = db
        self._workspace = workspace
        self._paths = MemoryPaths(workspace)
        self._sessions = sessions
        self._embedder = embedder
        # The vectors and the model live in a worker process (vector_worker.py): the daemon
        # sends text and gets ids and cosines back, and never imports numpy.
        self._vectors = vectors
        self._vectors_ready = False
        self._ready = asyncio.Event()
        self._file_stamps: dict[Path, tuple[int, int]] = {}
        self._files_lock = asyncio.Lock()
        self._messages_lock = asyncio.Lock()
        self._poked = asyncio.Event()
        self._last_poke = 0.0  # time.monotonic() of the newest record appended
        self._embed_poked = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._cursor: int | None = None  # the last stored record indexed (None: read the file)
        # The last row of the store's forget log applied (None: read the file), and whether a
        # row was written since the log was last read: no search may run before it is applied.
        self._forgot: int | None = None
        self._forgets_pending = False
        # Sessions with records appended in this process and not indexed yet (the newest id), and
        # the store's count of other processes' writes when the log was last read through.
        self._pending: dict[str, int] = {}
        self._outside_seen = -1
        self._kept_out = kept_out or KeptOut()
        # Whether each session recalled into lately is kept out (`kept_out`), as of the store's
        # count of other processes' writes; a change to the session drops its answer.
        self._scopes: dict[str, bool] = {}
        self._scopes_seen = -1

    @classmethod
    async def open(
        cls,
        path: Path,
        workspace: Path,
        sessions: SessionStore,
        embedder: Embedder | None,
        kept_out: KeptOut | None = None,
    ) -> MemoryIndex:
        db = await Database.open(path, index_db.MIGRATIONS)
        vectors = VectorProcess(path, embedder) if embedder is not None else None
        index = cls(db, workspace, sessions, embedder, vectors, kept_out)
        sessions.on_append(index._appended)
        sessions.on_forget(index._forget_logged)
        sessions.on_change(lambda session_id, _change: index._scopes.pop(session_id, None))
        return index

    def start(self) -> None:
        """Start following the store and making vectors, in the background."""
        self._poked.set()
        self._tasks.append(asyncio.create_task(self._follow(), name="memory-index-follow"))
        if self._embedder is not None:
            self._tasks.append(asyncio.create_task(self._embed_loop(), name="memory-index-embed"))

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._vectors is not None:
            await self._vectors.close()
        await self._db.close()

    @property
    def vectors(self) -> VectorProcess | None:
        """The handle on the vector worker, None without an embedder (the bench looks)."""
        return self._vectors

    # --- searching -----------------------------------------------------------------------------

    @property
    def relevant_cosine(self) -> float:
        """The cosine from which a hit found by meaning alone is close (it depends on the model)."""
        return self._embedder.relevant_cosine if self._embedder else 1.0

    async def search(
        self,
        query: str,
        *,
        limit: int = 10,
        kinds: tuple[str, ...] = KINDS,
        since: date | None = None,
        until: date | None = None,
        exclude_session: str | None = None,
        min_similarity: float | None = None,
        owner_only: bool = False,
    ) -> list[CitedHit]:
        """Hits for `query`, best first: full-text and vectors fused, recency counted. With
        `min_similarity`, a hit found by meaning alone below that cosine is left out of the
        best `limit` (auto-recall's cut: its row is then never read); with `owner_only`, what
        others wrote is left out (auto-recall's rule, see docs/architecture.md)."""
        # A pasted megabyte would be a MATCH of 100,000 terms built on the loop: its opening
        # says what it is about.
        query = query[:MAX_QUERY_CHARS]
        filters = Filters(
            tuple(k for k in kinds if k in KINDS) or KINDS,
            _stamp(since),
            _stamp(until + timedelta(days=1)) if until else None,
            exclude_session,
            owner_only,
        )
        if self._behind(exclude_session):
            await self.catch_up(exclude_session)
            return await self._ranked(query, filters, limit, min_similarity)
        # Usually nothing changed: the database thread looks at the memory files right before
        # the search (one hand-off for both), which is made again only when a file did change.
        changed: list[tuple[Path, str | None, tuple[int, int]]] = []
        found = await self._ranked(query, filters, limit, min_similarity, files_changed=changed)
        if not changed:
            return found
        await self._apply_files(changed)
        return await self._ranked(query, filters, limit, min_similarity)

    async def _ranked(
        self,
        query: str,
        filters: Filters,
        limit: int,
        min_similarity: float | None,
        *,
        files_changed: list[tuple[Path, str | None, tuple[int, int]]] | None = None,
    ) -> list[CitedHit]:
        """The best `limit` hits in the index as it is now; with `files_changed`, the memory
        files found changed are added to it (looked at on the database thread first)."""
        # Full-text (with its rows) on the database thread and vectors in a worker, at the same
        # time (both let go of the GIL while they work); the worker's hits come with their times,
        # so only those found by meaning alone that are kept need their rows fetched after.
        text = self._db.run(self._text_side, query, filters, files_changed)
        if self._vectors is not None and self._vectors_ready and query.strip():
            (text_hits, rows), vector_hits = await asyncio.gather(
                text, self._vector_hits(self._vectors, query, filters)
            )
        else:  # full-text only: no task for a side with nothing to do
            (text_hits, rows), vector_hits = await text, []
        times = {entry_id: ts for entry_id, _, ts in vector_hits}
        times.update((entry_id, row.ts) for entry_id, row in rows.items())
        vector_ids = [entry_id for entry_id, _, _ in vector_hits]
        ranked = fuse(text_hits, vector_ids, times, time.time())
        text_ranks = {entry_id: rank for rank, (entry_id, _, _) in enumerate(text_hits, 1)}
        cosines = {entry_id: cosine for entry_id, cosine, _ in vector_hits}
        if min_similarity is not None:  # before the cut: a hit left out makes room for the next
            ranked = [
                (i, score)
                for i, score in ranked
                if i in text_ranks or cosines.get(i, 0.0) >= min_similarity
            ]
        ranked = ranked[:limit]
        missing = [i for i, _ in ranked if i not in rows]
        if missing:
            rows.update(await self._db.run(index_db.rows, missing))
        hits = [
            _cited(rows[i], score, text_ranks.get(i), cosines.get(i))
            for i, score in ranked
            if i in rows
        ]
        # Full-text leaves others' entries out in its query; one found by meaning is left here.
        return [hit for hit in hits if hit.author.owned] if filters.owner_only else hits

    def _text_side(
        self,
        conn: sqlite3.Connection,
        query: str,
        filters: Filters,
        files_changed: list[tuple[Path, str | None, tuple[int, int]]] | None,
    ) -> tuple[list[tuple[int, float, float]], dict[int, index_db.Row]]:
        """On the database thread: the look at the memory files if asked, then full-text; each
        hit with the share of the query's content it holds (its weight in the fusion)."""
        if files_changed is not None:
            files_changed.extend(self._changed_files())
        hits, rows = index_db.text_hits_with_rows(
            conn, match_expression(query), filters, CANDIDATES
        )
        units = content_units(query)
        least = 1 / max(len(units.words) + len(units.chars), 1)  # one unit: the stemmer's match
        weighed = [
            (i, rank, max(units.coverage(rows[i].text) if i in rows else 0.0, least))
            for i, rank in hits
        ]
        return weighed, rows

    async def kept_out(self, session_id: str) -> bool:
        """Whether the session is kept out of memory, so nothing is recalled into it (read from
        the store once, then remembered until the session changes)."""
        outside = self._sessions.outside_writes
        if outside != self._scopes_seen or len(self._scopes) > SCOPES_REMEMBERED:
            self._scopes.clear()
            self._scopes_seen = outside
        known = self._scopes.get(session_id)
        if known is None:
            info = await self._sessions.get(session_id)
            if info is None:
                known = self._kept_out.covers(session_id, None, False, self._kept_out.agent)
            else:
                known = self._kept_out.covers(
                    session_id, info.channel, bool(info.memory_off), info.agent
                )
            self._scopes[session_id] = known
        return known

    def run_blocking(self, fn: Callable[[], T]) -> Awaitable[T]:
        """Run `fn`, blocking work that is not the index's (the system prompt's look at its
        files), on the index's thread with a search queued in the same pass of the loop: a
        turn whose prompt and auto-recall look side by side opens with one hand-off."""
        try:
            return self._db.run_blocking(fn)
        except DatabaseClosedError:  # a turn finishing while the daemon closes still looks
            return asyncio.to_thread(fn)

    async def _vector_hits(
        self, vectors: VectorProcess, query: str, filters: Filters
    ) -> list[tuple[int, float, float]]:
        try:
            return await vectors.search(query, filters, CANDIDATES, SEARCH_WAIT)
        except EmbeddingError as exc:
            log.warning("memory search without vectors: %s", exc)
            return []

    # --- keeping up ----------------------------------------------------------------------------

    async def catch_up(self, exclude_session: str | None = None) -> None:
        """Index what changed in the memory files and the store since the last look (both looks
        at once: each has its own lock and cursor). The store's log is read only when it may
        hold records a search that leaves out `exclude_session` could find: a turn's own
        session is what the follower is usually still indexing."""
        looks = [self.sync_files()]
        if self._behind(exclude_session):
            looks.append(self.sync_messages())
        await asyncio.gather(*looks)

    def _behind(self, exclude_session: str | None) -> bool:
        return (
            self._cursor is None
            or self._forgets_pending
            or self._sessions.outside_writes != self._outside_seen
            or any(session != exclude_session for session in self._pending)
        )

    def _appended(self, session_id: str, message_id: int) -> None:
        self._pending[session_id] = message_id
        self._last_poke = time.monotonic()
        self._poked.set()  # wakes the follower only if it waits for a first record

    async def sync_files(self) -> None:
        await self._apply_files(await asyncio.to_thread(self._changed_files))

    async def _apply_files(self, changed: list[tuple[Path, str | None, tuple[int, int]]]) -> None:
        """Index the files a look found changed (one another look applied already is skipped)."""
        async with self._files_lock:
            for path, content, stamp in changed:
                if self._file_stamps.get(path) != stamp:
                    await self._index_file(path, content, stamp[0] / 1e9)
                    self._file_stamps[path] = stamp

    def _changed_files(self) -> list[tuple[Path, str | None, tuple[int, int]]]:
        """(path, content or None if gone, stamp) of files whose size or mtime moved."""
        changed: list[tuple[Path, str | None, tuple[int, int]]] = []
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
        self._forget_vectors(removed)
        if added:
            self._embed_poked.set()

    async def sync_messages(self) -> int:
        """Apply the store's forget log and index the stored records after the cursors, a
        bounded batch per transaction; returns how many entries the forget log removed.

        The forget log's new rows are read before the records (a record a row removed is no
        longer among them) and applied in the transaction that indexes them, deletions first.
        The cursors are kept in memory between calls (the follower runs after every stored
        message): `add_messages` refuses a cursor another process moved, and then it is read
        again from the file.
        """
        async with self._messages_lock:
            outside, full, removed = self._sessions.outside_writes, 0, 0
            if self._cursor is None or self._forgot is None:
                self._cursor = await self._stored_cursor(index_db.MESSAGES_CURSOR)
                self._forgot = await self._stored_cursor(index_db.FORGETS_CURSOR)
            while True:
                self._forgets_pending = False  # a row logged from now on sets it again
                forgets = await self._sessions.forgets_after(self._forgot, FORGET_BATCH)
                found, through = await self._sessions.messages_after(self._cursor, MESSAGE_BATCH)
                if through == self._cursor and not forgets:
                    self._read_through(through, outside)
                    break
                entries = [
                    entry
                    for m in found
                    if not self._kept_out.covers(m.session_id, m.channel, m.memory_off, m.agent)
                    for entry in message_entries(
                        m.id, m.session_id, m.channel, m.title, m.record, m.answering, m.after_tools
                    )
                ]
                added, dropped = await self._db.run(
                    index_db.catch_up, forgets, entries, self._cursor, through
                )
                self._forget_vectors(dropped)
                removed += len(dropped)
                if forgets:
                    self._forgot = forgets[-1].id
                if added is None:
                    self._cursor = await self._stored_cursor(index_db.MESSAGES_CURSOR)
                    continue
                self._cursor = through
                if added:
                    self._embed_poked.set()
                if len(found) < MESSAGE_BATCH and len(forgets) < FORGET_BATCH:
                    # Short batches were read through the newest rows: nothing is left.
                    self._read_through(through, outside)
                    break
                full += len(found) == MESSAGE_BATCH
            if full >= MERGE_AFTER_BATCHES:
                await self._db.run(index_db.merge_segments)
            return removed

    def _read_through(self, through: int, outside: int) -> None:
        """The log is indexed through message `through`, as of the store's `outside` count."""
        self._pending = {s: i for s, i in self._pending.items() if i > through}
        self._outside_seen = outside

    async def _stored_cursor(self, key: str) -> int:
        return int(await self._db.run(index_db.get_state, key) or 0)

    async def _follow(self) -> None:
        """Catch up once at start, then index stored messages as they settle; the memory files
        are looked at again before every search (a stat of each per look: not per message)."""
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

    def _forget_logged(self) -> None:
        """The store logged something to forget: no search before it is applied, and the
        follower applies it now (its vectors leave the worker)."""
        self._forgets_pending = True
        self._last_poke = time.monotonic()
        self._poked.set()

    async def forget(self, text: str) -> int:
        """Drop conversation entries holding `text` now and when records are indexed again
        (logged in the store first: a kill before it is applied here does not undo it)."""
        await self._sessions.forget_text(text)
        return await self.sync_messages()

    def _forget_vectors(self, ids: list[int]) -> None:
        """Deleted entries leave the worker's vectors (the index file's go with their rows)."""
        if self._vectors is not None:
            self._vectors.remove(ids)

    async def rebuild(self) -> int:
        """Index everything again from the files and the store; returns the entries indexed."""
        async with self._files_lock, self._messages_lock:
            await self._db.run(index_db.clear)
            self._cursor = self._forgot = None
            self._file_stamps.clear()
            self._vectors_ready = False
            self._ready.clear()
            if self._vectors is not None:
                await self._vectors.restart()
        await self.catch_up()
        self._embed_poked.set()
        return await self._db.run(index_db.count_entries)

    # --- vectors -------------------------------------------------------------------------------

    async def _embed_loop(self) -> None:
        assert self._embedder is not None and self._vectors is not None
        model = self._embedder.model_id
        dropped = await self._db.run(index_db.drop_other_vectors, model)
        if dropped:
            log.info("memory index: embedding model changed, re-embedding %d entries", dropped)
        self._embed_poked.set()
        while True:
            await self._embed_poked.wait()
            await asyncio.sleep(EMBED_DELAY)
            self._embed_poked.clear()
            try:
                while await self._vectors.embed_pending(EMBED_BATCH):
                    pass
            except EmbeddingError as exc:
                log.warning("memory index: no vectors for now (%s)", exc)
                await asyncio.sleep(EMBED_RETRY)
                self._embed_poked.set()
            else:
                self._vectors_ready = True
                self._ready.set()

    async def vectors_ready(self) -> None:
        """Wait until every entry has a vector of the configured model (never, without one)."""
        await self._ready.wait()

    # --- the Memory page -----------------------------------------------------------------------

    async def status(self) -> dict[str, object]:
        await self.catch_up()  # the counts include notes edited since the last search
        entries = await self._db.run(index_db.count_entries)
        model = self._embedder.model_id if self._embedder else None
        vectors = await self._db.run(index_db.count_vectors, model) if model else 0
        return {
            "entries": entries,
            "vectors": vectors,
            "model": model,
            "vectors_ready": self._vectors_ready,
        }

    async def record_recall(self, session_id: str, query: str, hits: Sequence[CitedHit]) -> None:
        await self._db.run(
            index_db.add_recall, session_id, time.time(), query, [h.as_dict() for h in hits]
        )

    async def recalls(self, session_id: str | None, limit: int = 20) -> list[dict[str, object]]:
        """What auto-recall put into turns, newest first (what was forgotten since is applied
        first: a rewound turn's recall, or a deleted chat's words, never show)."""
        if self._forgets_pending:
            await self.sync_messages()
        return await self._db.run(index_db.recalls, session_id, limit)


def _cited(
    row: index_db.Row, score: float, text_rank: int | None, similarity: float | None
) -> CitedHit:
    return CitedHit(
        row.text,
        row.kind,
        row.source,
        row.locator,
        row.ts,
        score,
        row.heading,
        row.session_id,
        row.channel,
        row.title,
        text_rank,
        similarity,
        Author.from_record(json.loads(row.author)) if row.author else OWNER,
    )


def _stamp(day: date | None) -> float | None:
    return datetime(day.year, day.month, day.day).timestamp() if day else None
