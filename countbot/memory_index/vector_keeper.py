"""Embedding: every entry gets a vector of the configured model, made in batches by a task.

The vectors and the model live in a worker process (`vector_worker.py`): the daemon sends text
and gets ids and cosines back, and never imports numpy. Until every entry has a vector of the
configured model, search is full-text only, which is also what happens after a model switch
while the old vectors are replaced.
"""

from __future__ import annotations

import asyncio
import logging

from countbot.memory_index import index_db
from countbot.memory_index.embeddings import Embedder, EmbeddingError
from countbot.memory_index.vector_process import VectorProcess
from countbot.store.database import Database

log = logging.getLogger(__name__)

# Entries embedded per request to the vector worker: a search waits for one request of a batch,
# not a whole backlog. The offline ensemble's MiniLM reads a long entry in tens of milliseconds
# (docs/memory_recall.md), so a request is a few entries, not dozens.
EMBED_BATCH = 8
# After the embedder fails, full-text carries on and vectors are retried this much later (s).
EMBED_RETRY = 60.0
# Vectors wait this long after a poke, so a burst of messages is embedded as one batch (s).
EMBED_DELAY = 0.5


class VectorKeeper:
    """Makes the vectors new entries need, and says when search may use them (`ready`).

    Without an embedder it holds nothing and is never ready.
    """

    def __init__(self, db: Database, embedder: Embedder | None, vectors: VectorProcess | None):
        self._db = db
        self.embedder = embedder
        self.vectors = vectors
        self.ready = False
        self._ready = asyncio.Event()
        self._poked = asyncio.Event()

    def poke(self) -> None:
        """Entries were added: embed them (after `EMBED_DELAY`, with whatever else comes)."""
        self._poked.set()

    def remove(self, ids: list[int]) -> None:
        """Deleted entries leave the worker's vectors (the index file's go with their rows)."""
        if self.vectors is not None:
            self.vectors.remove(ids)

    async def wait_ready(self) -> None:
        """Wait until every entry has a vector of the configured model (never, without one)."""
        await self._ready.wait()

    async def reset(self) -> None:
        """Not ready until every entry is embedded again (a rebuild); the worker restarts."""
        self.ready = False
        self._ready.clear()
        if self.vectors is not None:
            await self.vectors.restart()

    async def run(self) -> None:
        """The embedding task: drop vectors of another model, then embed what is pending at
        every poke, in batches."""
        assert self.embedder is not None and self.vectors is not None
        dropped = await self._db.run(index_db.drop_other_vectors, self.embedder.model_id)
        if dropped:
            log.info("memory index: embedding model changed, re-embedding %d entries", dropped)
        self._poked.set()
        while True:
            await self._poked.wait()
            await asyncio.sleep(EMBED_DELAY)
            self._poked.clear()
            try:
                while await self.vectors.embed_pending(EMBED_BATCH):
                    pass
            except EmbeddingError as exc:
                log.warning("memory index: no vectors for now (%s)", exc)
                await asyncio.sleep(EMBED_RETRY)
                self._poked.set()
            else:
                self.ready = True
                self._ready.set()

    async def close(self) -> None:
        if self.vectors is not None:
            await self.vectors.close()
