"""The model calls a turn makes besides its answers (the memory flush, the summary): metered,
announced and audited.

Budgets and the Usage page must see their usage, though no history entry carries it; the user
must see that a summary runs (it can take a while); their memory writes are audited.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from countbot.agent.context.flush import Recorder
from countbot.llm.provider import LLMProvider
from countbot.llm.types import ChatRequest, StreamDone, StreamEvent, Usage

UsageSink = Callable[[str, Usage], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class SideCalls:
    """What the turn does with its side calls: `record` audits the flush's memory writes,
    `report` counts usage, `announce` is called once before the first of them."""

    record: Recorder
    report: UsageSink
    announce: Callable[[], None]


class MeteredProvider:
    """`provider`, reporting each finished call's usage (and the model that served it), and
    announcing the first call."""

    def __init__(
        self, provider: LLMProvider, report: UsageSink, announce: Callable[[], None]
    ) -> None:
        self._provider = provider
        self._report = report
        self._announce: Callable[[], None] | None = announce

    @property
    def model(self) -> str:
        return self._provider.model

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        if self._announce is not None:
            self._announce, announce = None, self._announce
            announce()
        async for event in self._provider.stream(request):
            if isinstance(event, StreamDone) and event.usage.total_tokens:
                await self._report(event.message.model or self.model, event.usage)
            yield event
