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

# (model, usage, purpose): what a side call cost and what it was for.
UsageSink = Callable[[str, Usage, str], Awaitable[None]]
SUMMARY = "summary"
MEMORY_FLUSH = "memory_flush"


@dataclass(frozen=True, slots=True)
class SideCalls:
    """What the turn does with its side calls: `record` audits the flush's memory writes,
    `report` counts usage, `announce` is called once before the first of them."""

    record: Recorder
    report: UsageSink
    announce: Callable[[], None]

    def metered(self, provider: LLMProvider) -> dict[str, MeteredProvider]:
        """`provider` for each purpose (`SUMMARY`, `MEMORY_FLUSH`), announcing once in all."""
        announced: list[bool] = []

        def announce() -> None:
            if not announced:
                announced.append(True)
                self.announce()

        return {
            purpose: MeteredProvider(provider, self.report, announce, purpose)
            for purpose in (SUMMARY, MEMORY_FLUSH)
        }


class MeteredProvider:
    """`provider`, reporting each finished call's usage under `purpose` (and the model that
    served it), and calling `announce` before each call."""

    def __init__(
        self,
        provider: LLMProvider,
        report: UsageSink,
        announce: Callable[[], None],
        purpose: str,
    ) -> None:
        self._provider = provider
        self._report = report
        self._announce = announce
        self._purpose = purpose

    @property
    def model(self) -> str:
        return self._provider.model

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        self._announce()
        async for event in self._provider.stream(request):
            if isinstance(event, StreamDone) and event.usage.total_tokens:
                model = event.message.model or self.model
                await self._report(model, event.usage, self._purpose)
            yield event
