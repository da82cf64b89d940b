"""WordLlama, the offline model the memory index used before USE: kept here only so that
bench/memory_recall.py can print its row beside the new one in the same run (when the
`wordllama` package is installed; the `memory` extra no longer brings it).

It is the embedder as it was: the wheel's 16 MB token table cut to its first 128 (Matryoshka)
dimensions, averaged over the tokens, in a worker thread of the process that searches.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

DIMS = 128
_CONFIG = "l2_supercat"
MAX_CHARS = 8_000


def available() -> bool:
    return importlib.util.find_spec("wordllama") is not None


class WordLlamaEmbedder:
    """The former default embedder (see the module docstring)."""

    model_id = f"wordllama:{_CONFIG}:{DIMS}"
    relevant_cosine = 0.3  # what auto-recall asked of it

    def __init__(self) -> None:
        self._model: Any = None

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return await asyncio.to_thread(self._embed_sync, [t[:MAX_CHARS] for t in texts])

    async def close(self) -> None:
        self._model = None

    def _embed_sync(self, texts: list[str]) -> np.ndarray:
        if self._model is None:
            self._model = _load()
        rows = self._model.embed(texts, norm=False)[:, :DIMS].astype(np.float32)
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)


def _load() -> Any:
    """From the wheel's files: WordLlama's `load()` would download its tokenizer."""
    import wordllama
    from safetensors import safe_open
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    root = Path(wordllama.__file__).parent
    tokenizer = Tokenizer.from_file(str(root / "tokenizers" / f"{_CONFIG}_tokenizer_config.json"))
    with safe_open(str(root / "weights" / f"{_CONFIG}_256.safetensors"), "np") as weights:
        table = weights.get_tensor("embedding.weight")[:, :DIMS]
    return WordLlamaInference(table, tokenizer)
