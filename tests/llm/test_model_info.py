"""Model facts from litellm's bundled map, with safe answers for models it does not know."""

from __future__ import annotations

from countbot.llm.model_info import (
    DEFAULT_CONTEXT_WINDOW,
    ModelInfo,
    fetch_model_info,
    model_info,
    provider_of,
    supports_vision,
)
from countbot.llm.types import Usage


async def test_known_model_has_window_vision_and_prices() -> None:
    info = await fetch_model_info("gpt-4o")

    assert info.known
    assert info.context_window >= 100_000
    assert info.supports_vision
    assert info.input_cost_per_token > 0 and info.output_cost_per_token > 0


async def test_supports_vision_for_a_known_and_an_unknown_model() -> None:
    assert await supports_vision("openai/gpt-4o")
    assert not await supports_vision("openai/my-local-finetune")


async def test_routing_prefix_is_looked_through() -> None:
    await fetch_model_info("gpt-4o")

    assert model_info("openai/gpt-4o").context_window == model_info("gpt-4o").context_window
    assert model_info("some-router/openai/gpt-4o").known


async def test_unknown_model_gets_conservative_fallbacks() -> None:
    info = await fetch_model_info("openai/my-local-finetune")

    assert info == ModelInfo("openai/my-local-finetune")
    assert (info.context_window, info.supports_vision, info.known) == (
        DEFAULT_CONTEXT_WINDOW,
        False,
        False,
    )
    assert info.cost(Usage(1000, 1000)) == 0.0


def test_cost_bills_cached_prompt_tokens_at_the_cache_price() -> None:
    info = ModelInfo(
        "m",
        input_cost_per_token=1e-6,
        output_cost_per_token=4e-6,
        cached_input_cost_per_token=1e-7,
    )

    cost = info.cost(Usage(prompt_tokens=1000, completion_tokens=100, cached_tokens=400))

    assert abs(cost - (600e-6 + 400e-7 + 400e-6)) < 1e-12


def test_cost_without_a_cache_price_bills_cached_tokens_as_input() -> None:
    info = ModelInfo("m", input_cost_per_token=1e-6)

    assert abs(info.cost(Usage(prompt_tokens=10, cached_tokens=5)) - 10e-6) < 1e-12


async def test_provider_names() -> None:
    await fetch_model_info("gpt-4o")

    assert provider_of("openai/anything") == "openai"
    assert provider_of("gpt-4o") == "openai"
    assert provider_of("anthropic/claude-sonnet-4-5") == "anthropic"
    assert provider_of("ollama/llama3") == "ollama"
    assert provider_of("not-a-known-model") == "unknown"
