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
from countbot.llm.retrying_provider import RetryingProvider
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

    async def _chunks(self, model: str, request: ChatRequest) -> AsyncIterator[Any]:
        response = await load_litellm().acompletion(model=model, **self._arguments(request))
        try:
            async for chunk in response:
                yield chunk
        finally:
            await response.aclose()

    def _url_of(self, model: str) -> str | None:
        return self._api_base

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
