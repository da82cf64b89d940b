"""What CountBot needs to know about a model: context window, vision, price, and its provider.

Read from the model map litellm ships (`model_prices_and_context_window_backup.json`) as a plain
JSON file, without importing litellm: the direct provider needs these facts too, and importing
litellm costs seconds and a hundred megabytes more than reading the file (about 30 ms, once).
Only the fields used here are kept. Names the map does not know (custom OpenAI-compatible
endpoints, local models) get conservative fallbacks.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from countbot.llm.types import Usage

# Small enough for most local and hosted models: an unknown model gets summarized early rather
# than failing with a context-window error.
DEFAULT_CONTEXT_WINDOW = 32_768


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """Facts about one model; `known` is False when these are fallbacks, not the model map's."""

    model: str
    context_window: int = DEFAULT_CONTEXT_WINDOW
    max_output_tokens: int | None = None
    supports_vision: bool = False
    input_cost_per_token: float = 0.0
    output_cost_per_token: float = 0.0
    cached_input_cost_per_token: float | None = None
    known: bool = False

    def cost(self, usage: Usage) -> float:
        """US dollars for `usage`; cached prompt tokens are part of `prompt_tokens`."""
        cached = min(usage.cached_tokens, usage.prompt_tokens)
        cached_price = self.cached_input_cost_per_token
        if cached_price is None:
            cached_price = self.input_cost_per_token
        return (
            (usage.prompt_tokens - cached) * self.input_cost_per_token
            + cached * cached_price
            + usage.completion_tokens * self.output_cost_per_token
        )


MODEL_MAP_FILE = "model_prices_and_context_window_backup.json"
# The fields of a map entry this module reads; the rest of the 3 MB file is dropped after parsing.
_KEPT_FIELDS = (
    "litellm_provider",
    "max_input_tokens",
    "max_tokens",
    "max_output_tokens",
    "supports_vision",
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_read_input_token_cost",
)

_SPACE = re.compile(r"[ \t\n\r]*")
_SEPARATOR = re.compile(r"[ \t\n\r]*,?[ \t\n\r]*")
_lock = threading.Lock()
_map: dict[str, tuple[Any, ...]] | None = None


def litellm_data(*parts: str) -> Path | None:
    """A file or folder litellm ships, found without importing litellm (None if it is absent)."""
    spec = importlib.util.find_spec("litellm")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder).joinpath(*parts)
        if path.exists():
            return path
    return None


def model_map_path() -> Path | None:
    """The model map file inside the installed litellm package."""
    return litellm_data(MODEL_MAP_FILE)


def load_model_map() -> dict[str, tuple[Any, ...]]:
    """The model map, trimmed to the fields used here (blocking the first time; thread-safe).

    Empty when litellm is not installed or its file is unreadable: every model is then unknown.
    """
    global _map
    if _map is None:
        with _lock:
            if _map is None:
                _map = _read_map(model_map_path())
    return _map


async def preload_model_map() -> None:
    """`load_model_map` off the event loop; free once loaded."""
    if _map is None:
        await asyncio.to_thread(load_model_map)


def _read_map(path: Path | None) -> dict[str, tuple[Any, ...]]:
    if path is None:
        return {}
    try:
        return _kept_entries(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _kept_entries(text: str) -> dict[str, tuple[Any, ...]]:
    """The map's entries, each parsed alone and cut to the kept fields at once: the whole map is
    never held as dicts (about 5 MB less at the peak, and after: the result stays loaded)."""
    decode = json.JSONDecoder().raw_decode
    at = _SPACE.match(text).end()
    if text[at : at + 1] != "{":
        raise ValueError("the model map is not a JSON object")
    at = _SPACE.match(text, at + 1).end()
    entries: dict[str, tuple[Any, ...]] = {}
    while text[at : at + 1] == '"':
        name, at = decode(text, at)
        colon = _SPACE.match(text, at).end()
        if text[colon : colon + 1] != ":":
            raise ValueError(f"no ':' after {name!r} in the model map")
        entry, at = decode(text, _SPACE.match(text, colon + 1).end())
        if isinstance(entry, dict) and name != "sample_spec":
            entries[name] = tuple(entry.get(field) for field in _KEPT_FIELDS)
        at = _SEPARATOR.match(text, at).end()
    return entries


@functools.lru_cache(maxsize=512)
def model_info(model: str) -> ModelInfo:
    """Info for a model string (e.g. "openai/gpt-4o"); reads the map file if not yet loaded."""
    known = load_model_map()
    for name in _lookup_names(model):
        raw = known.get(name)
        if raw is not None:
            return _from_map(model, raw)
    return ModelInfo(model)


async def fetch_model_info(model: str) -> ModelInfo:
    """`model_info` without blocking the event loop on the first read of the map."""
    await preload_model_map()
    return model_info(model)


async def supports_vision(model: str) -> bool:
    """Whether to send images to `model` (False for models the map does not know)."""
    return (await fetch_model_info(model)).supports_vision


@functools.lru_cache(maxsize=512)
def provider_of(model: str) -> str:
    """The provider of a model string ("openai", "anthropic", "ollama", ...), as litellm names it:
    the prefix, or for a bare name the map's provider ("unknown" for names it does not know)."""
    if "/" in model:
        return model.split("/", 1)[0]
    entry = load_model_map().get(model)
    provider = entry[_KEPT_FIELDS.index("litellm_provider")] if entry else None
    return str(provider) if provider else "unknown"


def _lookup_names(model: str) -> list[str]:
    """The model, then without its routing prefix: "openrouter/anthropic/x" also tries "x"."""
    names = [model]
    if "/" in model:
        names += [model.split("/", 1)[1], model.rsplit("/", 1)[1]]
    return list(dict.fromkeys(names))


def _from_map(model: str, kept: tuple[Any, ...]) -> ModelInfo:
    raw = dict(zip(_KEPT_FIELDS, kept, strict=True))
    window = raw.get("max_input_tokens") or raw.get("max_tokens") or DEFAULT_CONTEXT_WINDOW
    return ModelInfo(
        model=model,
        context_window=int(window),
        max_output_tokens=raw.get("max_output_tokens") or None,
        supports_vision=bool(raw.get("supports_vision")),
        input_cost_per_token=float(raw.get("input_cost_per_token") or 0.0),
        output_cost_per_token=float(raw.get("output_cost_per_token") or 0.0),
        cached_input_cost_per_token=raw.get("cache_read_input_token_cost"),
        known=True,
    )
