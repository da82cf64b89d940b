"""What CountBot needs to know about a model: context window, vision, price, and its provider.

Read from the model map litellm ships (`model_prices_and_context_window_backup.json`) as a plain
JSON file, without importing litellm: the direct provider needs these facts too, and importing
litellm costs seconds and a hundred megabytes more than reading the file. Only the entries of the
names asked about are decoded (a few ms per name, in a worker thread), and only their kept fields
stay. Names the map does not know (custom OpenAI-compatible endpoints, local models) get
conservative fallbacks.
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
    cache_write_cost_per_token: float | None = None
    known: bool = False
    provider: str = "unknown"  # as litellm names it ("openai", ...); "unknown" if not in the map

    def cost(self, usage: Usage) -> float:
        """US dollars for `usage`; cache reads and writes are part of `prompt_tokens`, each at
        its own price (the input price where the map has none)."""
        cached = min(usage.cached_tokens, usage.prompt_tokens)
        written = min(usage.cache_write_tokens, usage.prompt_tokens - cached)
        return (
            (usage.prompt_tokens - cached - written) * self.input_cost_per_token
            + cached * _or(self.cached_input_cost_per_token, self.input_cost_per_token)
            + written * _or(self.cache_write_cost_per_token, self.input_cost_per_token)
            + usage.completion_tokens * self.output_cost_per_token
        )


def _or(price: float | None, default: float) -> float:
    return default if price is None else price


MODEL_MAP_FILE = "model_prices_and_context_window_backup.json"
# The fields of a map entry this module reads; the rest of the (large) file is dropped after
# parsing.
_KEPT_FIELDS = (
    "litellm_provider",
    "max_input_tokens",
    "max_tokens",
    "max_output_tokens",
    "supports_vision",
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_read_input_token_cost",
    "cache_creation_input_token_cost",
)

_SPACE = re.compile(r"[ \t\n\r]*")
_SEPARATOR = re.compile(r"[ \t\n\r]*,?[ \t\n\r]*")
# litellm writes the map with `json.dump(..., indent=4)`: every model is a line `    "name": {`
# at exactly four spaces (nested keys sit deeper, and a JSON string holds no raw newline).
_INDENTED = b'{\n    "'
_ENTRY_END = b"\n    }"
# Answers looked up so far (a few names: the configured models); bounded all the same.
_KEPT_ANSWERS = 512
_lock = threading.Lock()
_answers: dict[str, ModelInfo] = {}


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


def model_info(model: str) -> ModelInfo:
    """Info for a model string (e.g. "openai/gpt-4o"); blocking the first time for each name
    (it reads the map file): `fetch_model_info` on the event loop."""
    info = _answers.get(model)
    if info is None:
        info = _look_up(model)
        with _lock:
            if len(_answers) >= _KEPT_ANSWERS:
                del _answers[next(iter(_answers))]
            _answers[model] = info
    return info


async def fetch_model_info(model: str) -> ModelInfo:
    """`model_info` without blocking the event loop on the first look-up of a name."""
    info = _answers.get(model)
    return info if info is not None else await asyncio.to_thread(model_info, model)


def _look_up(model: str) -> ModelInfo:
    """The map's entry for the model, or for the model without its routing prefix.

    Only that entry is decoded and nothing of the large file stays: the map was read whole once and
    kept for the few names a daemon ever asks about (docs/cold_start.md). Empty when litellm is not
    installed or its file is unreadable: every model is then unknown.
    """
    path = model_map_path()
    try:
        data = path.read_bytes() if path is not None else b""
    except OSError:
        data = b""
    if data.startswith(_INDENTED):
        entry = functools.partial(_entry, data)
    else:
        entry = _kept_entries(data.decode("utf-8", "replace")).get
    for name in _lookup_names(model):
        kept = entry(name) if name != "sample_spec" else None  # the map's key, not a model
        if kept is not None:
            return _from_map(model, kept)
    return ModelInfo(model)


def _entry(data: bytes, name: str) -> tuple[Any, ...] | None:
    """The kept fields of the entry `name` of a map written as litellm writes it."""
    start = data.find(b"\n    " + json.dumps(name).encode() + b": {")
    if start < 0:
        return None
    start = data.index(b"{", start)
    try:
        entry = json.loads(data[start : data.index(_ENTRY_END, start) + len(_ENTRY_END)])
    except ValueError:
        return None
    return tuple(entry.get(field) for field in _KEPT_FIELDS) if isinstance(entry, dict) else None


def _kept_entries(text: str) -> dict[str, tuple[Any, ...]]:
    """A map not written as litellm writes it: every entry parsed alone and cut to the kept
    fields at once (the whole map is never held as dicts); empty when it is no JSON object."""
    decode = json.JSONDecoder().raw_decode
    at = _SPACE.match(text).end()
    entries: dict[str, tuple[Any, ...]] = {}
    if text[at : at + 1] != "{":
        return entries
    at = _SPACE.match(text, at + 1).end()
    try:
        while text[at : at + 1] == '"':
            name, at = decode(text, at)
            colon = _SPACE.match(text, at).end()
            if text[colon : colon + 1] != ":":
                break
            entry, at = decode(text, _SPACE.match(text, colon + 1).end())
            if isinstance(entry, dict):
                entries[name] = tuple(entry.get(field) for field in _KEPT_FIELDS)
            at = _SEPARATOR.match(text, at).end()
    except ValueError:
        return entries
    return entries


async def supports_vision(model: str) -> bool:
    """Whether to send images to `model` (False for models the map does not know)."""
    return (await fetch_model_info(model)).supports_vision


def provider_of(model: str) -> str:
    """The provider of a model string ("openai", "anthropic", "ollama", ...), as litellm names it:
    the prefix, or for a bare name the map's provider ("unknown" for names it does not know)."""
    if "/" in model:
        return model.split("/", 1)[0]
    return model_info(model).provider


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
        cache_write_cost_per_token=raw.get("cache_creation_input_token_cost"),
        known=True,
        provider=str(raw.get("litellm_provider") or "unknown"),
    )
