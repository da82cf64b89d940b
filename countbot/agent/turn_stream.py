"""One model call inside a turn: pump the provider's stream, abortable by the cancel token.

`call_model` yields the call's text and reasoning chunks as they come, and last its
`ModelOutcome`: like pi-mono's stream function, it never raises for a failed or cancelled call,
whose outcome says so. The stream is consumed by a task of its own; cancelling the token cancels
that task, which closes the provider's iterator and with it the HTTP request in flight. One task
per model call (not per chunk) keeps the hot path cheap.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from countbot.agent import notices
from countbot.agent.events import AgentEvent, ReasoningChunk, TextChunk
from countbot.agent.history import AssistantEntry
from countbot.agent.runaway import RunawayWatch
from countbot.agent.turn_context import TurnContext
from countbot.llm.types import (
    AssistantMessage,
    ChatRequest,
    Message,
    ReasoningDelta,
    StreamDone,
    StreamError,
    StreamEvent,
    StreamFallback,
    StreamRetry,
    TextDelta,
    Usage,
)

_END = object()


@dataclass(frozen=True, slots=True)
class ModelOutcome:
    """How one model call ended: what it wrote, and its end (`done`), failure or cancel."""

    text: str = ""
    reasoning: str = ""
    done: StreamDone | None = None
    error: StreamError | None = None
    cancelled: bool = False
    # A small model repeated itself: the answer was stopped and the repetition dropped.
    runaway: bool = False
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    provider: str = ""

    def entry(self) -> AssistantEntry:
        assert self.done is not None
        m = self.done.message
        return AssistantEntry(
            text=m.text,
            tool_calls=m.tool_calls,
            reasoning=m.reasoning,
            model=m.model,
            provider=m.provider,
            usage=self.usage,
            stop_reason="repetition" if self.runaway else self.done.stop_reason,
        )

    def partial_entry(self, stop_reason: str) -> AssistantEntry:
        """What was already said before a cancel or a failure, so it stays in the session."""
        return AssistantEntry(
            text=self.text,
            reasoning=self.reasoning,
            model=self.model,
            provider=self.provider,
            usage=self.usage,
            stop_reason=stop_reason,
        )


async def call_model(
    context: TurnContext, messages: Sequence[Message]
) -> AsyncIterator[AgentEvent | ModelOutcome]:
    """Yield the text and reasoning chunks of one model call of `context`'s turn, then its
    `ModelOutcome` (always the last item)."""
    choice = context.choice
    request = ChatRequest(tuple(messages), context.tools, choice.temperature, choice.output_limit)
    queue: asyncio.Queue[StreamEvent | object] = asyncio.Queue()
    pump = asyncio.create_task(_pump(choice.provider.stream(request), queue))
    # Said by the pump's code as it ends (so the end is read with the last events, not a pass of
    # the loop later) and by the task's end: a Stop that came before the pump's first step
    # cancels it before any of its code runs, and the stream must end then too.
    pump.add_done_callback(lambda _: queue.put_nowait(_END))
    unregister = context.token.on_cancel(pump.cancel)
    got = _Streamed(choice.provider.model, RunawayWatch() if choice.small else None)
    try:
        while (item := await queue.get()) is not _END:
            event = got.take(item)
            if event is not None:
                yield event
            if got.runaway:
                break
    finally:
        unregister()
        if not pump.done():  # the consumer stopped first (a runaway answer, a closed turn)
            pump.cancel()
            await asyncio.wait((pump,))
        if not pump.cancelled():
            pump.exception()  # retrieved: a stream that failed says so by its missing end
    yield got.outcome(cancelled=context.token.cancelled and got.done is None)


@dataclass(slots=True)
class _Streamed:
    """What a model call's stream said so far (its outcome, while it is being written)."""

    model: str
    watch: RunawayWatch | None
    text: str = ""
    reasoning: str = ""
    provider: str = ""
    done: StreamDone | None = None
    error: StreamError | None = None
    usage: Usage = field(default_factory=Usage)
    runaway: bool = False

    def take(self, item: object) -> AgentEvent | None:
        """Take in one stream event; the turn's event it makes, if any."""
        if isinstance(item, TextDelta):
            self.text += item.text
            if self.watch is not None and (cut := self.watch.repeated(self.text)):
                self._stop_runaway(cut)
            return TextChunk(item.text)
        if isinstance(item, ReasoningDelta):
            self.reasoning += item.text
            return ReasoningChunk(item.text)
        if isinstance(item, StreamDone):
            self.done, self.usage = item, item.usage
            self.model, self.provider = item.message.model, item.message.provider
        elif isinstance(item, StreamError):
            self.error = item
        elif isinstance(item, StreamRetry):
            return notices.retrying(item.attempt, item.cause, item.delay, item.model)
        elif isinstance(item, StreamFallback):
            return notices.fallback(item.model, item.cause)
        return None

    def _stop_runaway(self, cut: int) -> None:
        """End the answer before its repetition, as if the model had stopped there."""
        self.text = self.text[:-cut].rstrip()
        self.runaway = True
        message = AssistantMessage(text=self.text, reasoning=self.reasoning, model=self.model)
        self.done = StreamDone(message, "length", self.usage)

    def outcome(self, *, cancelled: bool) -> ModelOutcome:
        return ModelOutcome(
            self.text,
            self.reasoning,
            self.done,
            self.error,
            cancelled,
            self.runaway,
            self.usage,
            self.model,
            self.provider,
        )


async def _pump(
    events: AsyncIterator[StreamEvent], queue: asyncio.Queue[StreamEvent | object]
) -> None:
    try:
        async for event in events:
            queue.put_nowait(event)
    finally:
        # A cancel thrown into the provider's generator has already closed it; aclose() then is
        # a no-op that covers iterators which are not generators.
        closer = getattr(events, "aclose", None)
        if closer is not None:
            await closer()
        queue.put_nowait(_END)
