"""Searching: full-text and vectors at the same time, fused with recency into cited hits.

A search first makes the index current enough for it (`SourceFollower`): the store's pending
records when it may find them, and the memory files, looked at on the database thread right
before the full-text query (one hand-off for both).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import time
from datetime import date, datetime, timedelta

from countbot.common.authorship import OWNER, Author
from countbot.memory.cited import KINDS, CitedHit
from countbot.memory_index import index_db
from countbot.memory_index.embeddings import EmbeddingError
from countbot.memory_index.follower import Changed, SourceFollower
from countbot.memory_index.fusion import fuse
from countbot.memory_index.index_db import Filters
from countbot.memory_index.text import content_units, query_terms
from countbot.memory_index.vector_keeper import VectorKeeper
from countbot.memory_index.vector_process import VectorProcess
from countbot.store.database import Database

log = logging.getLogger(__name__)

# Candidates each side contributes to the fusion.
CANDIDATES = 50
# Candidates the vector side gives auto-recall's search: it keeps six hits, and asking for fewer
# makes the worker's shortlist smaller (`vectors.SHORTLIST` per hit), on every turn's path. That
# search also reads the query with an ensemble's first model alone (the offline one's USE: its
# cosine is the scale auto-recall's cut is set in, and the second model would add its time to
# every turn: docs/memory_recall.md); the second is asked only when the first is unsure.
RECALL_CANDIDATES = 12
# How long a search waits for the vector side (s): the first one after the worker ended starts
# it again (seconds, more at 100,000 entries on a busy machine); past this it is full-text only,
# and the worker goes on starting for the next one.
SEARCH_WAIT = 10.0
MAX_QUERY_CHARS = 4_000

# One side's hits: (entry id, rank or cosine, and a weight or the entry's time).
Hits = list[tuple[int, float, float]]


class IndexSearch:
    """Answers searches over the index the follower keeps and the vectors the keeper makes."""

    def __init__(self, db: Database, follower: SourceFollower, vectors: VectorKeeper) -> None:
        self._db = db
        self._follower = follower
        self._vectors = vectors

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
        """`MemoryIndex.search`: hits for `query`, best first."""
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
        follower = self._follower
        if follower.behind(exclude_session):
            await follower.catch_up(exclude_session)
            return await self._ranked(query, filters, limit, min_similarity)
        # Usually nothing changed: the database thread looks at the memory files right before
        # the search (one hand-off for both), which is made again only when a file did change.
        changed: list[Changed] = []
        found = await self._ranked(query, filters, limit, min_similarity, files_changed=changed)
        if not changed:
            return found
        await follower.apply_files(changed)
        return await self._ranked(query, filters, limit, min_similarity)

    async def _ranked(
        self,
        query: str,
        filters: Filters,
        limit: int,
        min_similarity: float | None,
        *,
        files_changed: list[Changed] | None = None,
    ) -> list[CitedHit]:
        """The best `limit` hits in the index as it is now; with `files_changed`, the memory
        files found changed are added to it (looked at on the database thread first)."""
        # Full-text (with its rows) on the database thread and vectors in a worker, at the same
        # time (both let go of the GIL while they work); the worker's hits come with their times,
        # so only those found by meaning alone that are kept need their rows fetched after.
        text = self._db.run(self._text_side, query, filters, files_changed)
        recall = min_similarity is not None
        wanted = RECALL_CANDIDATES if recall else CANDIDATES
        vectors = self._vectors.vectors
        if vectors is not None and self._vectors.ready and query.strip():
            (text_hits, rows), (vector_hits, picked) = await asyncio.gather(
                text, _vector_hits(vectors, query, filters, wanted, min_similarity)
            )
        else:  # full-text only: no task for a side with nothing to do
            (text_hits, rows), (vector_hits, picked) = await text, ([], None)
        times = {entry_id: ts for entry_id, _, ts in vector_hits}
        times.update((entry_id, row.ts) for entry_id, row in rows.items())
        vector_ids = [entry_id for entry_id, _, _ in vector_hits]
        singled = picked[0] if picked else None
        if picked:  # the second reader's pick takes the vector side's first place
            times.setdefault(picked[0], picked[2])
            vector_ids = [picked[0], *(i for i in vector_ids if i != picked[0])]
        ranked = fuse(text_hits, vector_ids, times, time.time())
        text_ranks = {entry_id: rank for rank, (entry_id, _, _) in enumerate(text_hits, 1)}
        cosines = {entry_id: cosine for entry_id, cosine, _ in vector_hits}
        if min_similarity is not None:  # before the cut: a hit left out makes room for the next
            ranked = [
                (i, score)
                for i, score in ranked
                if i in text_ranks or i == singled or cosines.get(i, 0.0) >= min_similarity
            ]
        ranked = ranked[:limit]
        missing = [i for i, _ in ranked if i not in rows]
        if missing:
            rows.update(await self._db.run(index_db.rows, missing))
        hits = [
            _cited(rows[i], score, text_ranks.get(i), cosines.get(i), i == singled)
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
        files_changed: list[Changed] | None,
    ) -> tuple[Hits, dict[int, index_db.Row]]:
        """On the database thread: the look at the memory files if asked, then full-text; each
        hit with the share of the query's content it holds (its weight in the fusion)."""
        if files_changed is not None:
            files_changed.extend(self._follower.changed_files())
        hits, rows = index_db.text_hits_with_rows(conn, query_terms(query), filters, CANDIDATES)
        units = content_units(query)
        least = 1 / max(len(units.words) + len(units.chars), 1)  # one unit: the stemmer's match
        weighed = [
            (i, rank, max(units.coverage(rows[i].text) if i in rows else 0.0, least))
            for i, rank in hits
        ]
        return weighed, rows


async def _vector_hits(
    vectors: VectorProcess, query: str, filters: Filters, candidates: int, sure: float | None
) -> tuple[Hits, tuple[int, float, float] | None]:
    """The vector side's hits, and the entry the second reader singled out (auto-recall's
    search, `sure` its cut: vector_process.py's `recall_search`)."""
    try:
        if sure is None:
            return await vectors.search(query, filters, candidates, SEARCH_WAIT), None
        return await vectors.recall_search(query, filters, candidates, sure, SEARCH_WAIT)
    except EmbeddingError as exc:
        log.warning("memory search without vectors: %s", exc)
        return [], None


def _cited(
    row: index_db.Row,
    score: float,
    text_rank: int | None,
    similarity: float | None,
    singled_out: bool = False,
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
        singled_out,
    )


def _stamp(day: date | None) -> float | None:
    return datetime(day.year, day.month, day.day).timestamp() if day else None
