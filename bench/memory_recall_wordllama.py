"""WordLlama, the offline model the memory index used before USE: kept here only so that
bench/memory_recall.py can print its row beside the new one in the same run (when the
`wordllama` package is installed; the `memory` extra no longer brings it).

It is the model as it was: the wheel's 16 MB token table cut to its first 128 (Matryoshka)
dimensions, averaged over the tokens. It runs where every model now runs, in the index's vector
worker (`embedder()` names it for the worker, which loads `WordLlamaModel`).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from countbot.memory_index.embeddings import Embedder

DIMS = 128
_CONFIG = "l2_supercat"


def available() -> bool:
    return importlib.util.find_spec("wordllama") is not None


def embedder() -> Embedder:
    """The former default, for the vector worker (auto-recall asked a cosine of 0.3 of it)."""
    return Embedder(
        f"wordllama:{_CONFIG}:{DIMS}", 0.3, "bench.memory_recall_wordllama:WordLlamaModel"
    )


class WordLlamaModel:
    """Loaded in the vector worker: rows of the first DIMS dimensions (the worker makes them
    unit length)."""

    def __init__(self) -> None:
        self._model = _load()

    def encode(self, texts: list[str]) -> Any:
        return self._model.embed(texts, norm=False)[:, :DIMS]


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
