"""What CountBot needs to know about a model: context window, vision, price, and its provider.

Read from litellm's bundled model map, cached, with conservative fallbacks for names the map does
not know (custom OpenAI-compatible endpoints, local models).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from countbot.llm.litellm_import import load_litellm, preload_litellm
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


@functools.lru_cache(maxsize=512)
def model_info(model: str) -> ModelInfo:
    """Info for a litellm model string (e.g. "openai/gpt-4o"); imports litellm if not yet loaded."""
    litellm = load_litellm()
    for name in _lookup_names(model):
        try:
            raw: dict[str, Any] = dict(litellm.get_model_info(name))
        except Exception:  # litellm raises for every name it has not mapped
            continue
        return _from_map(model, raw)
    return ModelInfo(model)


async def fetch_model_info(model: str) -> ModelInfo:
    """`model_info` without blocking the event loop on the first litellm import."""
    await preload_litellm()
    return model_info(model)


async def supports_vision(model: str) -> bool:
    """Whether to send images to `model` (False for models the map does not know)."""
    return (await fetch_model_info(model)).supports_vision


@functools.lru_cache(maxsize=512)
def provider_of(model: str) -> str:
    """litellm's provider for a model string ("openai", "anthropic", "ollama", ...)."""
    litellm = load_litellm()
    try:
        return str(litellm.get_llm_provider(model)[1])
    except Exception:  # no provider prefix and not a model litellm knows by name
        return model.split("/", 1)[0] if "/" in model else "unknown"


def _lookup_names(model: str) -> list[str]:
    """The model, then without its routing prefix: "openrouter/anthropic/x" also tries "x"."""
    names = [model]
    if "/" in model:
        names += [model.split("/", 1)[1], model.rsplit("/", 1)[1]]
    return list(dict.fromkeys(names))


def _from_map(model: str, raw: dict[str, Any]) -> ModelInfo:
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
