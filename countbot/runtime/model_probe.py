"""One short call that shows whether the configured model answers: `doctor` and a Settings save.

Retries and fallbacks are off and the timeout is short, so a wrong name, address or key shows
up in seconds, where it happens (the command line, the Settings page), not at the first chat.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from countbot.agent.model_choice import ModelChoice
from countbot.config.settings import ModelSettings
from countbot.config.structs import replaced
from countbot.llm.types import (
    ChatRequest,
    StreamDone,
    StreamError,
    TextDelta,
    TextPart,
    UserMessage,
)
from countbot.runtime.models import SettingsModelResolver

# Seconds the probe may take; a local model answering "OK" needs far less.
PROBE_TIMEOUT = 10.0


class ProbeFailed(Exception):
    """The model did not answer; the message names the model and the cause."""


@dataclass(frozen=True, slots=True)
class ProbeAnswer:
    """What the model said, and how long it took (`first`: to its first text, None if none)."""

    choice: ModelChoice
    done: StreamDone
    first: float | None
    total: float


def probe_settings(model: ModelSettings) -> ModelSettings:
    """`model` with one short attempt: no retries, no fallbacks, at most PROBE_TIMEOUT."""
    return replaced(
        model,
        max_retries=0,
        fallbacks=[],
        request_timeout=min(model.request_timeout, PROBE_TIMEOUT),
    )


async def ask_ok(resolver: SettingsModelResolver, name: str) -> ProbeAnswer:
    """Ask the resolver's model (called `name` in messages) to say OK; raises ProbeFailed."""
    choice = await resolver()
    request = ChatRequest(
        (UserMessage((TextPart("Reply with the single word OK."),)),), max_tokens=16
    )
    started = time.perf_counter()
    first: float | None = None
    async for event in choice.provider.stream(request):
        if first is None and isinstance(event, TextDelta):
            first = time.perf_counter() - started
        if isinstance(event, StreamDone):
            return ProbeAnswer(choice, event, first, time.perf_counter() - started)
        if isinstance(event, StreamError):
            raise ProbeFailed(f"{name} failed: {event.message}")
    raise ProbeFailed(f"{name} gave no answer")
