"""`model.provider_path` and the endpoint table: which models go direct, where, with which key."""

from __future__ import annotations

import pytest

from countbot.llm.direct_provider import DirectProvider
from countbot.llm.litellm_provider import LiteLLMProvider
from countbot.llm.openai_compatible import EndpointError, resolve_endpoint
from countbot.llm.provider_choice import open_provider, takes_direct_path
from countbot.llm.provider_options import ProviderOptions
from countbot.llm.types import ChatRequest, StreamError, TextPart, UserMessage


@pytest.mark.parametrize(
    ("model", "api_base", "direct"),
    [
        ("openai/gpt-4o-mini", None, True),
        ("gpt-4o-mini", None, True),  # the model map says OpenAI
        ("deepseek/deepseek-chat", None, True),
        ("dashscope/qwen-plus", None, True),
        ("moonshot/kimi-k2", None, True),
        ("zhipu/glm-4-plus", None, True),
        ("openrouter/anthropic/claude-sonnet-4-5", None, True),
        ("groq/llama-3.3-70b-versatile", None, True),
        ("ollama/llama3.1", None, True),
        ("ollama_chat/llama3.1", None, True),
        ("hosted_vllm/qwen2.5", "http://gpu:8000/v1", True),
        ("lm_studio/qwen2.5", None, True),
        ("my-finetune", "http://127.0.0.1:8080/v1", True),  # any name behind an api_base
        ("anthropic/claude-sonnet-4-5", None, False),
        ("gemini/gemini-2.5-flash", None, False),
        ("bedrock/anthropic.claude-3", None, False),
        ("my-finetune", None, False),
    ],
)
def test_auto_takes_the_direct_path_only_for_openai_compatible_endpoints(
    model: str, api_base: str | None, direct: bool
) -> None:
    assert takes_direct_path("auto", model, (), api_base) is direct


def test_one_fallback_litellm_must_serve_takes_the_whole_chain_there() -> None:
    assert not takes_direct_path("auto", "openai/gpt-4o", ("anthropic/claude-sonnet-4-5",))
    assert takes_direct_path("auto", "openai/gpt-4o", ("deepseek/deepseek-chat",))
    assert takes_direct_path("direct", "anthropic/claude-sonnet-4-5")
    assert not takes_direct_path("litellm", "openai/gpt-4o")


def test_open_provider_builds_the_chosen_kind() -> None:
    assert isinstance(
        open_provider("auto", "openai/x", ProviderOptions(api_key="k")), DirectProvider
    )
    assert isinstance(
        open_provider("auto", "anthropic/x", ProviderOptions(api_key="k")), LiteLLMProvider
    )
    assert isinstance(
        open_provider("litellm", "openai/x", ProviderOptions(api_key="k")), LiteLLMProvider
    )


def test_endpoints_default_to_the_providers_address_and_strip_the_prefix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-from-env")
    monkeypatch.delenv("OPENROUTER_API_BASE", raising=False)
    monkeypatch.delenv("OLLAMA_API_BASE", raising=False)

    router = resolve_endpoint("openrouter/anthropic/claude-sonnet-4-5", None, None)
    ollama = resolve_endpoint("ollama/llama3.1", None, None)
    custom = resolve_endpoint("openai/local", "http://127.0.0.1:8080/v1/", None)

    assert router.url == "https://openrouter.ai/api/v1/chat/completions"
    assert (router.wire_model, router.api_key) == ("anthropic/claude-sonnet-4-5", "sk-or-from-env")
    assert ollama.url == "http://localhost:11434/v1/chat/completions"
    assert ollama.api_key is None
    assert custom.url == "http://127.0.0.1:8080/v1/chat/completions"
    assert (custom.wire_model, custom.api_key) == ("local", None)


def test_an_address_from_the_environment_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_API_BASE", "http://box:11434/v1")

    assert (
        resolve_endpoint("ollama/qwen3", None, None).url == "http://box:11434/v1/chat/completions"
    )


@pytest.mark.parametrize(
    ("model", "api_base", "message"),
    [
        ("nosuch/model", None, "unknown provider 'nosuch' in model.name ('nosuch/model')"),
        ("my-finetune", None, "model.name 'my-finetune' names no provider"),
        ("deepseek/deepseek-chat", None, "no API key for deepseek: set model.api_key"),
        ("hosted_vllm/qwen", None, "hosted_vllm needs the server's address: set model.api_base"),
    ],
)
def test_configuration_mistakes_are_named(
    model: str, api_base: str | None, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    monkeypatch.delenv("HOSTED_VLLM_API_BASE", raising=False)

    with pytest.raises(EndpointError) as raised:
        resolve_endpoint(model, api_base, None)

    assert str(raised.value).startswith(message)


async def test_a_missing_key_ends_the_stream_before_any_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    provider = DirectProvider("groq/llama-3.3-70b-versatile")

    error = await provider.complete(ChatRequest((UserMessage((TextPart("hi"),)),)))

    assert isinstance(error, StreamError) and not error.retryable
    assert error.message == (
        "no API key for groq: set model.api_key or the GROQ_API_KEY environment variable"
    )
