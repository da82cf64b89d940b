"""The one interface the agent uses to talk to models."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from countbot.llm.types import ChatRequest, StreamEvent


class LLMProvider(Protocol):
    """Streams one model response.

    `stream` never raises for model or network failures: the last event is `StreamDone` or
    `StreamError`. Closing the iterator early (`aclose()`) aborts the request in flight, which is
    how the agent's cancel token reaches the model.
    """

    @property
    def model(self) -> str: ...

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]: ...
