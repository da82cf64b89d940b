"""Where vectors come from: WordLlama's static embeddings (offline, the default) or an endpoint.

WordLlama (MIT) ships its 16 MB weights and tokenizer inside its wheel; the model is loaded from
those files directly, never through its `load()`, which looks for the tokenizer in a folder the
wheel does not have and then downloads it. Loading (~1 s; ~57 MB resident with the tokenizer)
happens in a worker thread on first use, and the model is dropped again after `IDLE_UNLOAD`
seconds without a call (the next call loads it again), so a daemon nobody talks to does not keep
it resident. Both need the `countbot[memory]` extra (numpy); without it the index is full-text
only.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import importlib.util
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from countbot.memory_index.numeric import numpy_module

if TYPE_CHECKING:
    import numpy as np
# Matryoshka-trained: the first 128 of WordLlama's 256 dimensions keep most of the quality at
# half the memory (a float32 row per entry in the daemon).
WORDLLAMA_DIMS = 128
_WORDLLAMA_CONFIG = "l2_supercat"


class EmbeddingError(RuntimeError):
    """The embedder cannot work (missing extra, endpoint failure): search uses full-text."""


class Embedder(Protocol):
    """Turns texts into unit-length float32 rows; `model_id` names the vector space."""

    model_id: str

    async def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def vectors_available() -> bool:
    """Whether numpy (the `memory` extra) is installed, so vectors can be searched at all."""
    return importlib.util.find_spec("numpy") is not None


def wordllama_available() -> bool:
    return importlib.util.find_spec("wordllama") is not None


MAX_EMBED_CHARS = 8_000
# Seconds without an embedding call after which WordLlama's model (~57 MB resident with its
# tokenizer) is dropped (`memory.embeddings_idle`). Auto-recall embeds every message's query, so
# while someone talks it stays loaded; reloading after a quiet spell costs ~1 s in a worker thread.
IDLE_UNLOAD = 300.0


class WordLlamaEmbedder:
    """WordLlama's static token embeddings, averaged; loaded lazily in a worker thread and
    dropped after `idle_unload` seconds without a call."""

    model_id = f"wordllama:{_WORDLLAMA_CONFIG}:{WORDLLAMA_DIMS}"

    def __init__(self, idle_unload: float = IDLE_UNLOAD) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._idle_unload = idle_unload
        self._last_used = 0.0
        self._unload_timer: asyncio.TimerHandle | None = None

    @property
    def loaded(self) -> bool:
        """Whether the model is resident now (the Memory page and the tests look)."""
        return self._model is not None

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        try:
            return await asyncio.to_thread(self._embed_sync, list(texts))
        finally:
            self._last_used = time.monotonic()
            if self._unload_timer is None:
                loop = asyncio.get_running_loop()
                self._unload_timer = loop.call_later(self._idle_unload, self._unload_if_idle)

    def _unload_if_idle(self) -> None:
        """Drop the model once no call came for `idle_unload` seconds; else look again later."""
        self._unload_timer = None
        left = self._last_used + self._idle_unload - time.monotonic()
        # A call in a worker thread holds the lock: it will arm the timer again when it ends.
        if left <= 0 and self._lock.acquire(blocking=False):
            try:
                self._model = None
            finally:
                self._lock.release()
            _return_freed_memory()
        elif left > 0:
            loop = asyncio.get_running_loop()
            self._unload_timer = loop.call_later(left, self._unload_if_idle)

    def _embed_sync(self, texts: list[str]) -> np.ndarray:
        np = numpy_module()
        model = self._loaded()
        # WordLlama pads every text to the longest one's tokens: a 1 MB message took ~1 GB and
        # seconds. An average of token vectors is settled long before this many characters.
        texts = [text[:MAX_EMBED_CHARS] for text in texts]
        rows = model.embed(texts, norm=False)[:, :WORDLLAMA_DIMS].astype(np.float32)
        return _unit(rows)

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = _load_wordllama()
            return self._model


def _return_freed_memory() -> None:
    """Hand the dropped model's heap back to the system: glibc keeps freed arena memory (the
    model was built in a worker thread's arena), measured 66 MB returned with this, 35 without."""
    # Not glibc (OSError, AttributeError): the freed memory is reused by the next load.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _load_wordllama() -> Any:
    try:
        numpy_module()  # first, so wordllama's own import finds it loaded single-threaded
        import wordllama
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference
    except ImportError as exc:
        raise EmbeddingError(
            "the memory extra is not installed (pip install 'countbot[memory]')"
        ) from exc
    root = Path(wordllama.__file__).parent
    tokenizer_file = root / "tokenizers" / f"{_WORDLLAMA_CONFIG}_tokenizer_config.json"
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    weights_file = root / "weights" / f"{_WORDLLAMA_CONFIG}_256.safetensors"
    with safe_open(str(weights_file), "np") as weights:
        # Only the first dimensions are kept (mean pooling is per dimension): half the table.
        table = weights.get_tensor("embedding.weight")[:, :WORDLLAMA_DIMS]
    return WordLlamaInference(table, tokenizer)


class EndpointEmbedder:
    """An OpenAI-compatible `/embeddings` endpoint (the user's own server or a provider)."""

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


def _unit(rows: np.ndarray) -> np.ndarray:
    np = numpy_module()
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.maximum(norms, 1e-9)
