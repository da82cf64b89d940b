"""The memory index: full-text and vectors over notes and past conversations.

`MemoryIndex` is the entry point, made of one part per job: `SourceFollower` catches up with
the memory files and the store (`follower.py`), `VectorKeeper` embeds new entries
(`vector_keeper.py`), `IndexSearch` answers searches (`search.py`) and `SessionScopes` says
which sessions are kept out of memory (`scope.py`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import date
from pathlib import Path
from typing import TypeVar

from countbot.memory.cited import KINDS, CitedHit
from countbot.memory_index import index_db
from countbot.memory_index.embeddings import Embedder
from countbot.memory_index.follower import SourceFollower
from countbot.memory_index.scope import KeptOut, SessionScopes
from countbot.memory_index.search import IndexSearch
from countbot.memory_index.vector_keeper import VectorKeeper
from countbot.memory_index.vector_process import VectorProcess
from countbot.store.database import Database, DatabaseClosedError
from countbot.store.sessions import SessionStore

T = TypeVar("T")


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
        kept_out = kept_out or KeptOut()
        self._db = db
        self._keeper = VectorKeeper(db, embedder, vectors, lambda: self._follower.last_record)
        self._follower = SourceFollower(
            db,
            workspace,
            sessions,
            kept_out,
            added=self._keeper.poke,
            removed=self._keeper.remove,
        )
        self._search = IndexSearch(db, self._follower, self._keeper)
        self._scopes = SessionScopes(sessions, kept_out)
        self._tasks: list[asyncio.Task[None]] = []

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
        sessions.on_append(index._follower.appended)
        sessions.on_forget(index._follower.forget_logged)
        sessions.on_change(index._scopes.changed)
        return index

    def start(self) -> None:
        """Start following the store and making vectors, in the background."""
        self._tasks.append(asyncio.create_task(self._follower.follow(), name="memory-index-follow"))
        if self._keeper.embedder is not None:
            self._tasks.append(asyncio.create_task(self._keeper.run(), name="memory-index-embed"))

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._keeper.close()
        await self._db.close()

    @property
    def vectors(self) -> VectorProcess | None:
        """The handle on the vector worker, None without an embedder (the bench looks)."""
        return self._keeper.vectors

    # --- searching -----------------------------------------------------------------------------

    @property
    def relevant_cosine(self) -> float:
        """The cosine from which a hit found by meaning alone is close (it depends on the model)."""
        embedder = self._keeper.embedder
        return embedder.relevant_cosine if embedder else 1.0

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
        others wrote is left out (auto-recall's rule, see docs/internals/memory_index.md)."""
        return await self._search.search(
            query,
            limit=limit,
            kinds=kinds,
            since=since,
            until=until,
            exclude_session=exclude_session,
            min_similarity=min_similarity,
            owner_only=owner_only,
        )

    async def kept_out(self, session_id: str) -> bool:
        """Whether the session is kept out of memory, so nothing is recalled into it."""
        return await self._scopes.kept_out(session_id)

    def run_blocking(self, fn: Callable[[], T]) -> Awaitable[T]:
        """Run `fn`, blocking work that is not the index's (the system prompt's look at its
        files), on the index's thread with a search queued in the same pass of the loop: a
        turn whose prompt and auto-recall look side by side opens with one hand-off."""
        try:
            return self._db.run_blocking(fn)
        except DatabaseClosedError:  # a turn finishing while the daemon closes still looks
            return asyncio.to_thread(fn)

    # --- keeping up ----------------------------------------------------------------------------

    async def catch_up(self, exclude_session: str | None = None) -> None:
        """Index what changed in the memory files and the store (`SourceFollower.catch_up`)."""
        await self._follower.catch_up(exclude_session)

    async def sync_files(self) -> None:
        await self._follower.sync_files()

    async def sync_messages(self) -> int:
        """Index the store's new records and apply its forget log; returns the entries the
        forget log removed."""
        return await self._follower.sync_messages()

    async def forget(self, text: str) -> int:
        """Drop conversation entries holding `text` now and when records are indexed again
        (logged in the store first: a kill before it is applied here does not undo it)."""
        return await self._follower.forget(text)

    async def rebuild(self) -> int:
        """Index everything again from the files and the store; returns the entries indexed."""
        async with self._follower.files_lock, self._follower.messages_lock:
            await self._db.run(index_db.clear)
            self._follower.reset()
            await self._keeper.reset()
        await self.catch_up()
        self._keeper.poke()
        return await self._db.run(index_db.count_entries)

    async def vectors_ready(self) -> None:
        """Wait until every entry has a vector of the configured model (never, without one)."""
        await self._keeper.wait_ready()

    # --- the Memory page -----------------------------------------------------------------------

    async def status(self) -> dict[str, object]:
        await self.catch_up()  # the counts include notes edited since the last search
        entries = await self._db.run(index_db.count_entries)
        embedder = self._keeper.embedder
        model = embedder.model_id if embedder else None
        vectors = await self._db.run(index_db.count_vectors, model) if model else 0
        return {
            "entries": entries,
            "vectors": vectors,
            "model": model,
            "vectors_ready": self._keeper.ready,
        }

    async def record_recall(self, session_id: str, query: str, hits: Sequence[CitedHit]) -> None:
        await self._db.run(
            index_db.add_recall, session_id, time.time(), query, [h.as_dict() for h in hits]
        )

    async def recalls(self, session_id: str | None, limit: int = 20) -> list[dict[str, object]]:
        """What auto-recall put into turns, newest first (what was forgotten since is applied
        first: a rewound turn's recall, or a deleted chat's words, never show)."""
        if self._follower.forgets_pending:
            await self.sync_messages()
        return await self._db.run(index_db.recalls, session_id, limit)
