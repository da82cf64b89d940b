"""What a turn talks to: the model, its settings and its window, resolved fresh for each turn."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from countbot.llm.model_info import DEFAULT_CONTEXT_WINDOW
from countbot.llm.provider import LLMProvider


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """What the next turn talks to; resolved per turn so settings apply without a restart."""

    provider: LLMProvider
    temperature: float | None = None
    max_tokens: int | None = None
    vision: bool = False
    # The smallest window of the model and its fallbacks, so a failover never overflows.
    context_window: int = DEFAULT_CONTEXT_WINDOW

    @property
    def model(self) -> str:
        """The model name whose tokenizer counts this choice's requests."""
        return self.provider.model


ModelResolver = Callable[[], Awaitable[ModelChoice]]


class ModelNotConfiguredError(Exception):
    """The resolver has no model to talk to; the turn ends with guidance, not a provider error."""
