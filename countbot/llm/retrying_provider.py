"""What every `LLMProvider` does the same way: retries, fallbacks, the deadline, the final events.

A provider subclass only opens the stream of chunks for one model (`_chunks`); this base turns
those chunks into stream events through the shared `StreamAccumulator`, and owns the policy. It
never raises for model or network failures: every stream ends with `StreamDone` or `StreamError`.
A failed attempt is retried only while nothing has reached the consumer yet, so a user never sees
the same text twice; after that, the failure ends the stream with the text so far. Fallback models
are tried only after retryable failures (outages, rate limits): an auth or request error would
fail the same way on another model with the same credentials. An unreachable server is not
retried (nothing listens; waiting only delays the message) but does move on to the fallbacks.
"""

from __future__ import annotations

import asyncio
import dataclasses
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from countbot.llm.cooldown import Cooldowns
from countbot.llm.deadline import Deadline
from countbot.llm.errors import ModelFailure, classify_error
from countbot.llm.model_info import fetch_model_info, model_info, provider_of
from countbot.llm.provider_options import ProviderOptions
from countbot.llm.retry import RetryPolicy
from countbot.llm.stream_accumulator import StreamAccumulator
from countbot.llm.types import (
    AssistantMessage,
    ChatRequest,
    ReasoningDelta,
    StreamDone,
    StreamError,
    StreamEvent,
    StreamFallback,
    StreamRetry,
    TextDelta,
    ToolCall,
    ToolCallReady,
    Usage,
    UsageReport,
)


@dataclass(slots=True)
class StreamFacts:
    """What a provider learned about a response that its chunks do not carry.

    `finished`: whether the server itself sent a finish reason (None: trust the chunks; litellm
    invents a "stop" for a stream that just stopped, so its provider says what really came).
    """

    content_type: str = ""
    finished: bool | None = None


@dataclass(frozen=True, slots=True)
class WholeCompletion:
    """A non-streamed completion a provider got instead of chunks: it is a valid answer."""

    response: Any


@dataclass(slots=True)
class _Attempt:
    """How one call to one model went, for the retry loop to decide what comes next."""

    failure: ModelFailure | None = None
    emitted: bool = False
    partial_text: str = ""


class RetryingProvider(ABC):
    """Streams from `model` with retries, a deadline and fallbacks (`ProviderOptions`).

    The options' `request_timeout` bounds each attempt as a whole, streaming included, so a
    provider that stalls mid-answer cannot hang a turn.
    """

    def __init__(self, model: str, options: ProviderOptions | None = None) -> None:
        options = options or ProviderOptions()
        self._model = model
        self._models = (model, *options.fallbacks)
        self._api_base = options.api_base
        self._api_key = options.api_key
        self._timeout = options.request_timeout
        self._extra_headers = dict(options.extra_headers)
        self._prompt_caching = options.prompt_caching
        self._retry = RetryPolicy(
            max_retries=options.max_retries, sleep=options.sleep, rng=options.rng
        )
        self._secrets: tuple[str, ...] = (options.api_key,) if options.api_key else ()
        self._cooldowns = options.cooldowns or Cooldowns()

    @property
    def model(self) -> str:
        return self._model

    @property
    def provider(self) -> str:
        """The provider of the primary model ("openai", "ollama", ...)."""
        return provider_of(self._model)

    @abstractmethod
    def _chunks(self, model: str, request: ChatRequest, facts: StreamFacts) -> AsyncIterator[Any]:
        """An async generator of one call's chunks (OpenAI chunk shape, read by attribute), or
        one `WholeCompletion`; it fills in `facts` as it learns them.

        Closing it must abort the request; it raises for failures (classified here).
        """

    async def aclose(self) -> None:  # noqa: B027 - nothing to release unless a subclass keeps it
        """Release what the provider keeps between calls (connections); it stays usable."""

    async def _before_first_call(self) -> ModelFailure | None:
        """Work a subclass needs before calling (an import); a failure ends the stream at once."""
        return None

    async def prepare(self) -> None:
        """Do now, in the background, what the first call would otherwise do first (read the
        models' facts, open what a subclass keeps); a one-shot chat overlaps it with its start."""
        for model in self._models:
            await fetch_model_info(model)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Deltas as they arrive, then tool calls and usage, then `StreamDone` or `StreamError`."""
        await self.prepare()  # the facts, read in a thread once: each answer's price needs them
        failure = await self._before_first_call()
        if failure is not None:
            yield _stream_error(failure, self._model, "")
            return
        failure = ModelFailure("No model to call", retryable=False, kind="unknown")
        models = self._cooldowns.order(self._models)
        for index, model in enumerate(models):
            if index:
                yield StreamFallback(model, failure.message)
            retry = 0
            while True:
                attempt = _Attempt()
                async with aclosing(self._attempt(model, request, attempt)) as events:
                    async for event in events:
                        yield event
                if attempt.failure is None:
                    self._cooldowns.succeeded(model)
                    return
                failure = attempt.failure
                if attempt.emitted or not failure.retryable:
                    yield _stream_error(failure, model, attempt.partial_text)
                    return
                if failure.kind == "unreachable":
                    break
                retry += 1
                delay = self._retry.delay(retry, failure.retry_after)
                if delay is None:
                    break
                yield StreamRetry(model, retry, failure.message, delay)
                await self._retry.sleep(delay)
            self._cooldowns.failed(model, failure.message)  # the next turns skip it a while
        yield _stream_error(failure, models[-1], "")

    async def complete(self, request: ChatRequest) -> AssistantMessage | StreamError:
        """The whole answer at once (for summaries and other background calls)."""
        async with aclosing(self.stream(request)) as events:
            async for event in events:
                if isinstance(event, StreamDone):
                    return event.message
                if isinstance(event, StreamError):
                    return event
        return StreamError("The model stream ended without an answer", True, model=self._model)

    async def _attempt(
        self, model: str, request: ChatRequest, attempt: _Attempt
    ) -> AsyncIterator[StreamEvent]:
        """One call to one model; a failure is recorded in `attempt`, never raised."""
        accumulator = StreamAccumulator()
        facts = StreamFacts()
        deadline = Deadline(self._timeout)
        try:
            # Closing the chunk generator closes its HTTP response: this is what aborts the
            # request when the consumer stops listening (aclose) or the deadline passes.
            async with aclosing(self._chunks(model, request, facts)) as chunks:
                while (chunk := await deadline.next(chunks)) is not None:
                    for delta in _take(accumulator, chunk):
                        attempt.emitted = True
                        yield delta
            for delta in accumulator.close():
                attempt.emitted = True
                yield delta
        except Exception as exc:
            attempt.failure = self._failure(exc, model)
            attempt.partial_text = accumulator.text
            return
        finally:
            deadline.close()
        finished = accumulator.finished if facts.finished is None else facts.finished
        attempt.failure = accumulator.ending_failure(
            finished=finished, content_type=facts.content_type
        )
        if attempt.failure is not None:
            attempt.partial_text = accumulator.text
            return
        # Repairing broken arguments is pure-Python parsing, slow per KB: long ones in a
        # thread, which hands the GIL back often, rather than one long stall of the loop.
        if accumulator.arguments_chars() > _INLINE_ARGUMENTS:
            calls = await asyncio.to_thread(accumulator.tool_calls)
        else:
            calls = accumulator.tool_calls()
        for event in _finish(model, accumulator, calls):
            yield event

    def _failure(self, exc: Exception, model: str) -> ModelFailure:
        failure = classify_error(exc, secrets=self._secrets, url=self._url_of(model))
        if type(exc) is TimeoutError:  # our own deadline, not the HTTP client's
            message = f"The model did not finish answering within {self._timeout:g} s"
            return dataclasses.replace(failure, message=message)
        return failure

    def _url_of(self, model: str) -> str | None:
        """The address `model`'s requests go to, to name in "cannot reach" errors (if known)."""
        return None


# Tool-call arguments up to this size are parsed (or repaired) on the loop: a few ms at most.
_INLINE_ARGUMENTS = 2048


def _take(accumulator: StreamAccumulator, chunk: Any) -> list[TextDelta | ReasoningDelta]:
    if isinstance(chunk, WholeCompletion):
        return accumulator.add_completion(chunk.response)
    return accumulator.add(chunk)


def _finish(
    model: str, accumulator: StreamAccumulator, calls: tuple[ToolCall, ...]
) -> list[StreamEvent]:
    """The closing events of a complete stream: tool calls, usage, and the whole message."""
    events: list[StreamEvent] = [ToolCallReady(call) for call in calls]
    usage = accumulator.usage
    if usage is not None:
        usage = dataclasses.replace(usage, cost_usd=model_info(model).cost(usage))
        events.append(UsageReport(usage))
    message = AssistantMessage(
        text=accumulator.text,
        tool_calls=calls,
        reasoning=accumulator.reasoning,
        model=model,
        provider=provider_of(model),
    )
    stop = accumulator.stop_reason(bool(calls))
    events.append(StreamDone(message, stop, usage or Usage()))
    return events


def _stream_error(failure: ModelFailure, model: str, partial_text: str) -> StreamError:
    return StreamError(
        message=failure.message,
        retryable=failure.retryable,
        status_code=failure.status_code,
        model=model,
        partial_text=partial_text,
    )
