"""The model-access layer: provider-neutral types, the provider protocol, and litellm behind it."""

from countbot.llm.errors import ModelFailure, classify_error
from countbot.llm.litellm_import import load_litellm, preload_litellm
from countbot.llm.litellm_provider import LiteLLMProvider
from countbot.llm.model_info import ModelInfo, fetch_model_info, model_info, provider_of
from countbot.llm.provider import LLMProvider
from countbot.llm.retry import RetryPolicy
from countbot.llm.tool_args import parse_tool_call

__all__ = [
    "LLMProvider",
    "LiteLLMProvider",
    "ModelFailure",
    "ModelInfo",
    "RetryPolicy",
    "classify_error",
    "fetch_model_info",
    "load_litellm",
    "model_info",
    "parse_tool_call",
    "preload_litellm",
    "provider_of",
]
