"""One model call inside a turn: pump the provider's stream, abortable by the cancel token.

The stream is consumed by a task of its own; cancelling the token cancels that task, which closes
the provider's iterator and with it the HTTP request in flight. One task per model call (not per
chunk) keeps the hot path cheap.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from countbot.agent import notices
from countbot.agent.cancel import CancelToken
from countbot.agent.events import AgentEvent, ReasoningChunk, TextChunk
from countbot.agent.history import AssistantEntry
from countbot.agent.model_choice import ModelChoice
from countbot.agent.runaway import RunawayWatch
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
    ToolSpec,
    Usage,
)

_END = object()


@dataclass(slots=True)
class ModelTurn:
    """What one model call produced, filled in while streaming."""

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

    def message(self) -> AssistantMessage:
        assert self.done is not None
        return self.done.message

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


async def stream_model(
    choice: ModelChoice,
    messages: Sequence[Message],
    tools: tuple[ToolSpec, ...],
    token: CancelToken,
    out: ModelTurn,
) -> AsyncIterator[AgentEvent]:
    """Yield text/reasoning chunks of one model call; the outcome lands in `out`."""
    request = ChatRequest(tuple(messages), tools, choice.temperature, choice.output_limit)
    out.model = choice.provider.model
    queue: asyncio.Queue[StreamEvent | object] = asyncio.Queue()
    pump = asyncio.create_task(_pump(choice.provider.stream(request), queue))
    # Said by the pump's code as it ends (so the end is read with the last events, not a pass of
    # the loop later) and by the task's end: a Stop that came before the pump's first step
    # cancels it before any of its code runs, and the stream must end then too.
    pump.add_done_callback(lambda _: queue.put_nowait(_END))
    unregister = token.on_cancel(pump.cancel)
    watch = RunawayWatch() if choice.small else None
    try:
        while True:
            item = await queue.get()
            if item is _END:
                break
            if isinstance(item, TextDelta):
                out.text += item.text
                yield TextChunk(item.text)
                if watch is not None and (cut := watch.repeated(out.text)):
                    _stop_runaway(out, cut)
                    break
            elif isinstance(item, ReasoningDelta):
                out.reasoning += item.text
                yield ReasoningChunk(item.text)
            elif isinstance(item, StreamDone):
                out.done = item
                out.usage = item.usage
                out.model, out.provider = item.message.model, item.message.provider
            elif isinstance(item, StreamError):
                out.error = item
            elif isinstance(item, StreamRetry):
                yield notices.retrying(item.attempt, item.cause, item.delay, item.model)
            elif isinstance(item, StreamFallback):
                yield notices.fallback(item.model, item.cause)
    finally:
        unregister()
        if not pump.done():  # the consumer stopped first (a runaway answer, a closed turn)
            pump.cancel()
            await asyncio.wait((pump,))
        if not pump.cancelled():
            pump.exception()  # retrieved: a stream that failed says so by its missing end
    out.cancelled = token.cancelled and out.done is None


def _stop_runaway(out: ModelTurn, cut: int) -> None:
    """End the answer before its repetition, as if the model had stopped there."""
    out.text = out.text[:-cut].rstrip()
    out.runaway = True
    message = AssistantMessage(text=out.text, reasoning=out.reasoning, model=out.model)
    out.done = StreamDone(message, "length", out.usage)


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
