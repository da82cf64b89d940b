"""The daemon's handle on the vector worker (`vector_worker.py`), a `LineWorker` child: started at
the first call, one request at a time, ended after the embedder's `idle_unload` seconds without a
call (the next call starts it again, and it reads the vectors from the index file).

A caller that stops waiting (a cancelled turn, or a search past its `wait`) leaves the answer to
be read and dropped, so the worker stays in step and warm; only a request past `timeout` (a
worker that hangs) or a broken pipe kills it. Every failure is an `EmbeddingError`: search uses
full-text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from countbot.common.line_worker import LineWorker, WorkerError
from countbot.memory_index.embeddings import Embedder, EmbeddingError
from countbot.memory_index.index_db import Filters

# One request's limit, after which the worker is taken for hung and killed: the first call
# starts Python, loads the model and reads every vector (a few seconds at 100,000 entries).
REQUEST_TIMEOUT = 120.0
_WORKER = "countbot.memory_index.vector_worker"
# Files the worker derives from its model and the file its vectors' rows are mapped from (unlinked:
# gone when the worker ends), beside the index file: `<data_dir>/cache`.
CACHE_DIR = "cache"
# One BLAS thread: the child shares the machine with the daemon it serves, and a product over
# the vectors is memory-bound (a second thread measured slower). And glibc's malloc keeps a
# search's and a query's scratch (blocks of up to a few hundred KB, made and freed every search)
# in its heap, and up to `_HEAP_KEPT` of it free, where the children's default (common/heap.py)
# maps each such block anew and unmaps it when freed: every search then faulted its pages in again,
# hundreds of faults on a turn's path (docs/agent_turn.md). Bigger blocks (a batch of entries, a
# search over a million rows) are still mapped apart and given back.
_HEAP_BLOCK = 1024 * 1024
_HEAP_KEPT = 4 * _HEAP_BLOCK
_ENV = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MALLOC_MMAP_THRESHOLD_": str(_HEAP_BLOCK),
    "MALLOC_TRIM_THRESHOLD_": str(_HEAP_KEPT),
}


def worker_setup(index: Path, embedder: Embedder) -> dict[str, Any]:
    """The worker's set-up line (`vector_worker.Worker`'s arguments) for `embedder` on `index`:
    a bench that holds a `Worker` of its own builds it from the same."""
    options = dict(embedder.options)
    if embedder.uses_cache:
        options["cache_dir"] = str(index.parent / CACHE_DIR)
    return {
        "index": str(index),
        "model": embedder.model_id,
        "factory": embedder.factory,
        "options": options,
        "rows_dir": str(index.parent / CACHE_DIR),
    }


class VectorProcess:
    """See the module docstring."""

    def __init__(self, index: Path, embedder: Embedder, timeout: float = REQUEST_TIMEOUT) -> None:
        self._worker = LineWorker(
            _WORKER,
            worker_setup(index, embedder),
            idle_unload=embedder.idle_unload,
            timeout=timeout,
            env=_ENV,
        )

    @property
    def pid(self) -> int | None:
        """The worker's process id while it runs (the tests and the bench look)."""
        return self._worker.pid

    async def embed_pending(self, limit: int) -> int:
        """Embed up to `limit` entries that have no vector yet; returns how many (0: none left)."""
        return int((await self._call({"op": "embed_pending", "limit": limit}))["embedded"])

    async def search(
        self,
        query: str,
        filters: Filters,
        limit: int,
        wait: float | None = None,
        first_only: bool = False,
    ) -> list[tuple[int, float, float]]:
        """(entry id, cosine, time) of the nearest entries the filters admit, best first;
        `first_only`: the query read by an ensemble's first model alone (vector_worker.py)."""
        answer = await self._call(_search(query, filters, limit, first_only), wait)
        return _hits(answer["hits"])

    async def recall_search(
        self, query: str, filters: Filters, limit: int, sure: float, wait: float | None = None
    ) -> tuple[list[tuple[int, float, float]], tuple[int, float, float] | None]:
        """Auto-recall's search: `search` with the query read by an ensemble's first model
        alone, and the entry its second model singles out when the first's best cosine is below
        `sure` (its cosine the second model's), if any (models.py, `Ensemble.second_query`)."""
        request = {**_search(query, filters, limit, True), "sure": sure}
        answer = await self._call(request, wait)
        picked = answer.get("picked")
        return _hits(answer["hits"]), (_hits([picked])[0] if picked else None)

    async def stats(self) -> dict[str, Any]:
        """The worker's rows, the bytes of their codes in memory and of their mapped file, and the
        seconds it took to read them at start."""
        return await self._call({"op": "stats"})

    def remove(self, ids: Sequence[int]) -> None:
        """Drop entries from a running worker (one that starts later reads them gone). Sent at
        once, not awaited: the worker reads it after the request it may be answering."""
        if ids:
            self._worker.send({"op": "remove", "ids": list(ids)})

    async def _call(self, request: dict[str, Any], wait: float | None = None) -> dict[str, Any]:
        try:
            return await self._worker.call(request, wait)
        except WorkerError as exc:
            raise EmbeddingError(f"the vector worker: {exc}") from exc

    async def restart(self) -> None:
        """End the worker after the request running now (the index was cleared): the next call
        starts one that reads the index file afresh."""
        await self._worker.restart()

    async def close(self) -> None:
        """End the worker now and wait for it (the index closes)."""
        await self._worker.close()


def _search(query: str, filters: Filters, limit: int, first_only: bool) -> dict[str, Any]:
    return {
        "op": "search",
        "query": query,
        "filters": filters.wanted(),
        "limit": limit,
        "first_only": first_only,
    }


def _hits(rows: list[list[Any]]) -> list[tuple[int, float, float]]:
    return [(int(i), float(score), float(ts)) for i, score, ts in rows]
