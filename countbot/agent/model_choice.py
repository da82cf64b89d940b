"""What a turn talks to: the model, its settings and its window, resolved fresh for each turn."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from countbot.llm.model_info import DEFAULT_CONTEXT_WINDOW
from countbot.llm.provider import LLMProvider

# A small model's answer is bounded to this share of its window (at least the floor): a tiny
# model that loses its way would otherwise write until the window is full (minutes on a CPU).
SMALL_MODEL_OUTPUT_SHARE = 16
SMALL_MODEL_OUTPUT_FLOOR = 256


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """What the next turn talks to; resolved per turn so settings apply without a restart."""

    provider: LLMProvider
    temperature: float | None = None
    max_tokens: int | None = None
    vision: bool = False
    # The smallest window of the model and its fallbacks, so a failover never overflows.
    context_window: int = DEFAULT_CONTEXT_WINDOW
    # A small model (the built-in one, constrained tool calls): tools only when the request
    # needs them (`agent/toolset.py`), and a bounded answer.
    small: bool = False
    # The model for housekeeping (summaries, the memory flush): `model.utility`, else None and
    # the turn's own model does it.
    utility: LLMProvider | None = None
    # The utility model's window (its summaries' excerpts must fit it); None: `context_window`.
    utility_window: int | None = None

    @property
    def housekeeping(self) -> LLMProvider:
        """The provider summaries and the memory flush call."""
        return self.utility or self.provider

    @property
    def housekeeping_window(self) -> int:
        """The window a summary's or the flush's request must fit."""
        return min(self.context_window, self.utility_window or self.context_window)

    @property
    def output_limit(self) -> int | None:
        """The answer's token limit: `max_tokens`, bounded further for a small model."""
        if not self.small:
            return self.max_tokens
        bound = max(self.context_window // SMALL_MODEL_OUTPUT_SHARE, SMALL_MODEL_OUTPUT_FLOOR)
        return min(self.max_tokens or bound, bound)

    @property
    def model(self) -> str:
        """The model name whose tokenizer counts this choice's requests."""
        return self.provider.model


class ModelResolver(Protocol):
    """Resolves the turn's model; `model` is a chat's own pick (None: the configured one)."""

    async def __call__(self, model: str | None = None) -> ModelChoice: ...


class ModelNotConfiguredError(Exception):
    """The resolver has no model to talk to; the turn ends with guidance, not a provider error."""
