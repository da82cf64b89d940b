"""The daemon's handle on the vector worker (`vector_worker.py`): started at the first call,
one request at a time, ended after the embedder's `idle_unload` seconds without a call (the next
call starts it again, and it reads the vectors from the index file).

A request runs as a task of its own, so a caller that stops waiting (a cancelled turn, or a
search past its `wait`) does not cut the pipe mid-answer: the answer is read and dropped, and
the worker stays in step and warm. Only a request past `timeout` (a worker that hangs) or a
broken pipe kills the worker. Every failure is an `EmbeddingError`: search uses full-text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from countbot.memory_index.embeddings import Embedder, EmbeddingError
from countbot.memory_index.index_db import Filters

# One request's limit, after which the worker is taken for hung and killed: the first call
# starts Python, loads the model and reads every vector (a few seconds at 100,000 entries).
REQUEST_TIMEOUT = 120.0
_WORKER = "countbot.memory_index.vector_worker"


class VectorProcess:
    """See the module docstring."""

    def __init__(self, index: Path, embedder: Embedder, timeout: float = REQUEST_TIMEOUT) -> None:
        self._setup = {
            "index": str(index),
            "model": embedder.model_id,
            "factory": embedder.factory,
            "options": embedder.options,
        }
        self._idle_unload = embedder.idle_unload
        self._timeout = timeout
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._last_used = 0.0
        self._idle_timer: asyncio.TimerHandle | None = None
        self._requests: set[asyncio.Task[Any]] = set()
        self._ending: set[asyncio.Task[None]] = set()

    @property
    def pid(self) -> int | None:
        """The worker's process id while it runs (the tests and the bench look)."""
        process = self._process
        return process.pid if process is not None and process.returncode is None else None

    async def embed_pending(self, limit: int) -> int:
        """Embed up to `limit` entries that have no vector yet; returns how many (0: none left)."""
        return int((await self._call({"op": "embed_pending", "limit": limit}))["embedded"])

    async def search(
        self, query: str, filters: Filters, limit: int, wait: float | None = None
    ) -> list[tuple[int, float]]:
        """(entry id, cosine) of the nearest entries the filters admit, best first."""
        request = {"op": "search", "query": query, "filters": asdict(filters), "limit": limit}
        answer = await self._call(request, wait)
        return [(int(entry_id), float(score)) for entry_id, score in answer["hits"]]

    async def stats(self) -> dict[str, Any]:
        """The worker's rows, their bytes and the seconds it took to read them at start."""
        return await self._call({"op": "stats"})

    def remove(self, ids: Sequence[int]) -> None:
        """Drop entries from a running worker (one that starts later reads them gone). Sent at
        once, not awaited: the worker reads it after the request it may be answering."""
        process = self._process
        if ids and process is not None and process.returncode is None:
            assert process.stdin is not None
            if not process.stdin.is_closing():
                process.stdin.write(_line({"op": "remove", "ids": list(ids)}))

    async def _call(self, request: dict[str, Any], wait: float | None = None) -> dict[str, Any]:
        exchange = asyncio.create_task(self._exchange(request))
        self._requests.add(exchange)
        exchange.add_done_callback(_read_outcome)
        exchange.add_done_callback(self._requests.discard)
        try:
            async with asyncio.timeout(wait):
                return await asyncio.shield(exchange)
        except TimeoutError as exc:  # the answer still comes; this caller stops waiting
            raise EmbeddingError(f"the vector worker did not answer within {wait} s") from exc

    async def _exchange(self, request: dict[str, Any]) -> dict[str, Any]:
        async with self._lock:
            finished = False
            try:
                async with asyncio.timeout(self._timeout):
                    process = await self._started()
                    assert process.stdin is not None and process.stdout is not None
                    process.stdin.write(_line(request))
                    await process.stdin.drain()
                    answer = json.loads(await process.stdout.readline() or b"null")
                finished = isinstance(answer, dict)
            except (TimeoutError, OSError, ValueError) as exc:
                raise EmbeddingError(f"the vector worker failed: {exc!r}") from exc
            finally:
                self._used()
                if not finished:  # hung, died, or cut off mid-answer: its stream is lost
                    self._end(kill=True)
        if not finished:
            raise EmbeddingError("the vector worker exited")
        if "error" in answer:
            raise EmbeddingError(str(answer["error"]))
        return answer

    async def _started(self) -> asyncio.subprocess.Process:
        if self._process is None or self._process.returncode is not None:
            # One BLAS thread: the child shares the machine with the daemon it serves, and a
            # product over the vectors is memory-bound (a second thread measured slower).
            env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
            process = await asyncio.create_subprocess_exec(
                *(sys.executable, "-m", _WORKER),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=env,
            )
            assert process.stdin is not None
            process.stdin.write(_line(self._setup))  # before any `remove` can be written
            self._process = process
        return self._process

    def _used(self) -> None:
        self._last_used = time.monotonic()
        if self._idle_timer is None:
            loop = asyncio.get_running_loop()
            self._idle_timer = loop.call_later(self._idle_unload, self._end_if_idle)

    def _end_if_idle(self) -> None:
        """End the worker once no call came for `idle_unload` seconds; else look again later."""
        self._idle_timer = None
        left = self._last_used + self._idle_unload - time.monotonic()
        if left > 0 or self._lock.locked():  # a call running now arms the timer when it ends
            loop = asyncio.get_running_loop()
            self._idle_timer = loop.call_later(max(left, 0.1), self._end_if_idle)
        else:
            self._end(kill=False)

    def _end(self, *, kill: bool) -> None:
        """End the worker: closing its stdin lets it exit; `kill` when it is mid-answer."""
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        if kill:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        elif process.stdin is not None:
            process.stdin.close()
        task = asyncio.get_running_loop().create_task(_reaped(process))
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    async def restart(self) -> None:
        """End the worker after the request running now (the index was cleared): the next call
        starts one that reads the index file afresh."""
        async with self._lock:
            self._end(kill=False)

    async def close(self) -> None:
        """End the worker now and wait for it (the index closes)."""
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        for task in list(self._requests):
            task.cancel()  # a request still running kills the worker as it ends
        await asyncio.gather(*self._requests, return_exceptions=True)
        self._end(kill=False)
        await asyncio.gather(*self._ending, return_exceptions=True)


def _read_outcome(task: asyncio.Task[Any]) -> None:
    """An abandoned request's failure was its caller's to see, or no one's: read, not logged."""
    if not task.cancelled():
        task.exception()


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode() + b"\n"


async def _reaped(process: asyncio.subprocess.Process) -> None:
    """Wait for an ended worker, killing it if it does not exit on its own."""
    try:
        await asyncio.wait_for(process.wait(), 10.0)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
