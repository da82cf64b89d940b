"""Embedding: every entry gets a vector of the configured model, made in batches by a task.

The vectors and the model live in a worker process (`vector_worker.py`): the daemon sends text
and gets ids and cosines back, and never imports numpy. Until every entry has a vector of the
configured model, search is full-text only, which is also what happens after a model switch
while the old vectors are replaced.

Embedding is background work that yields to a burst of turns: entries are embedded once neither
an entry nor a record of the store has come for `EMBED_QUIET` (between turns), and a catch-up
stops when records come again, unless an entry has waited `EMBED_MAX_LAG`. A stream of turns
(webhook deliveries, a mail import) then keeps the cores for its requests and turns instead of
sharing them with the vectors of its own entries (the offline models cost the worker more CPU
an entry than the turn that made it: docs/triggers.md); until the stream pauses, those entries
are found by their words (full-text), not yet by their meaning. A chat, seconds between turns,
has each turn's entries embedded before the next turn.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

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
# Entries are embedded once no entry and no record of the store has come for this long (s): a
# turn's records and entries come together, and a stream of turns leaves no such gap.
EMBED_QUIET = 0.5
# ... or once the first of them has waited this long while records kept coming (s): a daemon
# that is never quiet still gets its vectors, a minute late at most.
EMBED_MAX_LAG = 60.0


class VectorKeeper:
    """Makes the vectors new entries need, and says when search may use them (`ready`).

    Without an embedder it holds nothing and is never ready. `last_record` gives the
    `time.monotonic()` of the store's newest record (the follower's): how busy the daemon is.
    """

    def __init__(
        self,
        db: Database,
        embedder: Embedder | None,
        vectors: VectorProcess | None,
        last_record: Callable[[], float],
    ) -> None:
        self._db = db
        self.embedder = embedder
        self.vectors = vectors
        self._last_record = last_record
        self.ready = False
        self._ready = asyncio.Event()
        self._poked = asyncio.Event()
        self._poked_at = 0.0

    def poke(self) -> None:
        """Entries were added: embed them at the next quiet moment (see the module docstring)."""
        self._poked_at = time.monotonic()
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
        self.poke()
        while True:
            await self._poked.wait()
            due = time.monotonic() + EMBED_MAX_LAG  # the first waiting entry's limit
            try:
                while not await self._caught_up(self.vectors, due):
                    pass
            except EmbeddingError as exc:
                log.warning("memory index: no vectors for now (%s)", exc)
                await asyncio.sleep(EMBED_RETRY)
                self._poked.set()
            else:
                self.ready = True
                self._ready.set()

    async def _caught_up(self, vectors: VectorProcess, due: float) -> bool:
        """At the next quiet moment (or `due`), embed what is pending in batches; False when
        records came meanwhile and the rest waits for the next quiet moment."""
        while True:  # a record or an entry coming meanwhile only moves the moment on
            left = min(self._last_change() + EMBED_QUIET, due) - time.monotonic()
            if left <= 0:
                break
            await asyncio.sleep(left)
        self._poked.clear()
        began = time.monotonic()
        while await vectors.embed_pending(EMBED_BATCH):
            if self._last_record() > began and time.monotonic() < due:
                return False
        return True

    def _last_change(self) -> float:
        return max(self._last_record(), self._poked_at)

    async def close(self) -> None:
        if self.vectors is not None:
            await self.vectors.close()
