"""The `LLMProvider` that reaches every model through litellm (`litellm.acompletion`).

Retries, fallbacks, the deadline and the final events are `RetryingProvider`'s; this module only
builds litellm's arguments and opens its stream. litellm is imported off the event loop on the
first call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from countbot.llm.errors import ModelFailure
from countbot.llm.litellm_import import load_litellm, preload_litellm
from countbot.llm.openai_compatible import unknown_provider
from countbot.llm.openai_format import to_openai_messages, to_openai_tools
from countbot.llm.prompt_cache import caches_by_breakpoints, mark_breakpoints
from countbot.llm.retrying_provider import RetryingProvider, StreamFacts, WholeCompletion
from countbot.llm.stream_accumulator import is_whole_answer
from countbot.llm.types import ChatRequest


class LiteLLMProvider(RetryingProvider):
    """Streams from `model` (a litellm model string) with retries, a deadline and fallbacks."""

    async def _before_first_call(self) -> ModelFailure | None:
        """Import litellm off the loop, then refuse model strings litellm cannot route."""
        litellm = await preload_litellm()
        for model in self._models:
            try:
                litellm.get_llm_provider(model, api_base=self._api_base)
            except Exception:  # litellm raises BadRequestError for names it cannot route
                message = unknown_provider(model, fallback=model != self._model)
                return ModelFailure(message, retryable=False, kind="bad_request")
        return None

    async def _chunks(
        self, model: str, request: ChatRequest, facts: StreamFacts
    ) -> AsyncIterator[Any]:
        litellm = load_litellm()
        arguments = self._arguments(model, request)
        response = await litellm.acompletion(model=model, **arguments)
        received = False
        try:
            async for chunk in response:
                received = received or _carries_content(chunk)
                yield chunk
        finally:
            await response.aclose()
        facts.content_type = _content_type(response)
        facts.finished = _provider_finished(response)
        if not received and is_whole_answer(facts.content_type):
            # litellm's stream parser drops a JSON completion's message: ask once more without
            # streaming, which it does read.
            yield WholeCompletion(
                await litellm.acompletion(model=model, **_not_streamed(arguments))
            )
            facts.finished = True

    def _url_of(self, model: str) -> str | None:
        return self._api_base

    def _arguments(self, model: str, request: ChatRequest) -> dict[str, Any]:
        """Keyword arguments for `litellm.acompletion` to `model`, except the model."""
        messages = to_openai_messages(request.messages)
        tools = to_openai_tools(request.tools) if request.tools else None
        if self._prompt_caching and caches_by_breakpoints(model):
            messages, tools = mark_breakpoints(messages, tools)
        arguments: dict[str, Any] = {
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": self._timeout,
            # Retries are ours; the OpenAI client would otherwise retry 429s and 5xx on its own.
            "max_retries": 0,
        }
        optional = {
            "tools": tools,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "api_base": self._api_base,
            "api_key": self._api_key,
            "extra_headers": self._extra_headers or None,
        }
        arguments.update({k: v for k, v in optional.items() if v is not None})
        return arguments


def _carries_content(chunk: Any) -> bool:
    """Whether a chunk brought text, reasoning or a tool call."""
    for choice in getattr(chunk, "choices", None) or ():
        delta = getattr(choice, "delta", None)
        if delta is not None and any(
            getattr(delta, name, None) for name in ("content", "reasoning_content", "tool_calls")
        ):
            return True
    return False


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
