"""A provider whose calls report their usage: the model calls a turn makes besides its answers.

The silent memory flush and the summary are model calls too; budgets and the Usage page must see
them, though no history entry carries their usage.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from countbot.llm.provider import LLMProvider
from countbot.llm.types import ChatRequest, StreamDone, StreamEvent, Usage

UsageSink = Callable[[str, Usage], Awaitable[None]]


class MeteredProvider:
    """`provider`, reporting each finished call's usage (and the model that served it)."""

    def __init__(self, provider: LLMProvider, report: UsageSink) -> None:
        self._provider = provider
        self._report = report

    @property
    def model(self) -> str:
        return self._provider.model

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        async for event in self._provider.stream(request):
            if isinstance(event, StreamDone) and event.usage.total_tokens:
                await self._report(event.message.model or self.model, event.usage)
            yield event
