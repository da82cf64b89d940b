"""The `LLMProvider` that reaches every model through litellm: streaming, retries, fallbacks.

It never raises for model or network failures: every stream ends with `StreamDone` or
`StreamError`. A failed attempt is retried only while nothing has reached the consumer yet, so a
user never sees the same text twice; after that, the failure ends the stream with the text so far.
Fallback models are tried only after retryable failures (outages, rate limits): an auth or
request error would fail the same way on another model with the same credentials.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from countbot.llm.errors import ModelFailure, classify_error
from countbot.llm.litellm_import import preload_litellm
from countbot.llm.model_info import model_info, provider_of
from countbot.llm.openai_format import to_openai_messages, to_openai_tools
from countbot.llm.retry import RetryPolicy
from countbot.llm.stream_accumulator import StreamAccumulator
from countbot.llm.types import (
    AssistantMessage,
    ChatRequest,
    StreamDone,
    StreamError,
    StreamEvent,
    ToolCallReady,
    Usage,
    UsageReport,
)


@dataclass(slots=True)
class _Attempt:
    """How one call to one model went, for the retry loop to decide what comes next."""

    failure: ModelFailure | None = None
    emitted: bool = False
    partial_text: str = ""


class LiteLLMProvider:
    """Streams from `model` (a litellm model string) with retries, a deadline and fallbacks.

    `request_timeout` bounds each attempt as a whole, streaming included, so a provider that
    stalls mid-answer cannot hang a turn.
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        fallbacks: Sequence[str] = (),
        max_retries: int = 3,
        request_timeout: float = 120.0,
        extra_headers: Mapping[str, str] | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self._model = model
        self._models = (model, *fallbacks)
        self._api_base = api_base
        self._api_key = api_key
        self._timeout = request_timeout
        self._extra_headers = dict(extra_headers or {})
        self._retry = RetryPolicy(max_retries=max_retries, sleep=sleep, rng=rng)
        self._secrets = (api_key,) if api_key else ()

    @property
    def model(self) -> str:
        return self._model

    @property
    def provider(self) -> str:
        """litellm's provider for the primary model; imports litellm if it is not loaded yet."""
        return provider_of(self._model)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Deltas as they arrive, then tool calls and usage, then `StreamDone` or `StreamError`."""
        litellm = await preload_litellm()
        arguments = self._arguments(request)
        failure = ModelFailure("No model to call", retryable=False, kind="unknown")
        for model in self._models:
            retry = 0
            while True:
                attempt = _Attempt()
                async with aclosing(self._attempt(litellm, model, arguments, attempt)) as events:
                    async for event in events:
                        yield event
                if attempt.failure is None:
                    return
                failure = attempt.failure
                if attempt.emitted or not failure.retryable:
                    yield _stream_error(failure, model, attempt.partial_text)
                    return
                retry += 1
                if not await self._retry.wait(retry, failure.retry_after):
                    break
        yield _stream_error(failure, self._models[-1], "")

    async def complete(self, request: ChatRequest) -> AssistantMessage | StreamError:
        """The whole answer at once (for summaries and other background calls)."""
        async with aclosing(self.stream(request)) as events:
            async for event in events:
                if isinstance(event, StreamDone):
                    return event.message
                if isinstance(event, StreamError):
                    return event
        return StreamError("The model stream ended without an answer", True, model=self._model)

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        """Keyword arguments for `litellm.acompletion`, except the model."""
        arguments: dict[str, Any] = {
            "messages": to_openai_messages(request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": self._timeout,
            # Retries are ours; the OpenAI client would otherwise retry 429s and 5xx on its own.
            "max_retries": 0,
        }
        optional = {
            "tools": to_openai_tools(request.tools) if request.tools else None,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "api_base": self._api_base,
            "api_key": self._api_key,
            "extra_headers": self._extra_headers or None,
        }
        arguments.update({k: v for k, v in optional.items() if v is not None})
        return arguments

    async def _attempt(
        self, litellm: ModuleType, model: str, arguments: dict[str, Any], attempt: _Attempt
    ) -> AsyncIterator[StreamEvent]:
        """One call to one model; a failure is recorded in `attempt`, never raised."""
        accumulator = StreamAccumulator()
        deadline = asyncio.get_running_loop().time() + self._timeout
        response = None
        try:
            async with asyncio.timeout_at(deadline):
                response = await litellm.acompletion(model=model, **arguments)
            while True:
                async with asyncio.timeout_at(deadline):
                    chunk = await anext(response, None)
                if chunk is None:
                    break
                for delta in accumulator.add(chunk):
                    attempt.emitted = True
                    yield delta
            content_type = _content_type(response)
            finished = _provider_finished(response)
            if accumulator.wants_whole_answer(content_type):
                # litellm's stream parser drops a JSON completion's message: ask once more
                # without streaming, which it does read.
                async with asyncio.timeout_at(deadline):
                    whole = await litellm.acompletion(model=model, **_not_streamed(arguments))
                for delta in accumulator.add_completion(whole):
                    attempt.emitted = True
                    yield delta
                finished = True
            for delta in accumulator.close():
                attempt.emitted = True
                yield delta
        except Exception as exc:
            attempt.failure = self._failure(exc)
            attempt.partial_text = accumulator.text
            return
        finally:
            # Closing the litellm stream closes its HTTP response: this is what aborts the
            # request when the consumer stops listening (aclose) or the deadline passes.
            if response is not None:
                await response.aclose()
        attempt.failure = accumulator.ending_failure(finished=finished, content_type=content_type)
        if attempt.failure is not None:
            attempt.partial_text = accumulator.text
            return
        for event in _finish(model, accumulator):
            yield event

    def _failure(self, exc: Exception) -> ModelFailure:
        failure = classify_error(exc, secrets=self._secrets)
        if type(exc) is TimeoutError:  # our own deadline, not the HTTP client's
            message = f"The model did not finish answering within {self._timeout:g} s"
            return dataclasses.replace(failure, message=message)
        return failure


def _finish(model: str, accumulator: StreamAccumulator) -> list[StreamEvent]:
    """The closing events of a complete stream: tool calls, usage, and the whole message."""
    calls = accumulator.tool_calls()
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


def _content_type(response: Any) -> str:
    """The model server's Content-Type, as litellm keeps it among its hidden parameters."""
    hidden = getattr(response, "_hidden_params", None) or {}
    headers = hidden.get("additional_headers") or {}
    return str(headers.get("llm_provider-content-type", ""))


def _provider_finished(response: Any) -> bool:
    """Whether the server itself sent a finish reason; litellm adds a "stop" when it did not."""
    received = getattr(response, "received_finish_reason", None)
    return (received or getattr(response, "intermittent_finish_reason", None)) is not None


def _not_streamed(arguments: dict[str, Any]) -> dict[str, Any]:
    rest = {k: v for k, v in arguments.items() if k != "stream_options"}
    return {**rest, "stream": False}


def _stream_error(failure: ModelFailure, model: str, partial_text: str) -> StreamError:
    return StreamError(
        message=failure.message,
        retryable=failure.retryable,
        status_code=failure.status_code,
        model=model,
        partial_text=partial_text,
    )
