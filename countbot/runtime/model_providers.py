"""Makes the provider a `ModelChoice` talks to, for `SettingsModelResolver` (which imports this
module in a worker thread at its first resolution: an idle daemon holds none of the providers'
modules)."""

from __future__ import annotations

import dataclasses

from countbot.agent.model_choice import ModelChoice
from countbot.config.settings import ModelSettings
from countbot.constrained_calls.mode import tool_form
from countbot.llm.cooldown import Cooldowns
from countbot.llm.local_endpoint import LocalEndpoint
from countbot.llm.model_info import fetch_model_info, supports_vision
from countbot.llm.provider_choice import open_provider
from countbot.llm.provider_options import ProviderOptions
from countbot.llm.retrying_provider import RetryingProvider


async def model_choice(
    settings: ModelSettings,
    name: str,
    window: int,
    cooldowns: Cooldowns,
    local: LocalEndpoint | None,
) -> tuple[ModelChoice, RetryingProvider]:
    """The choice for model `name` under `settings` (fitted to `window`), and its provider;
    `local` is the local model's server when `name` is one."""
    api_key = settings.api_key.get_secret_value() if settings.api_key else None
    if api_key is None and settings.api_base and settings.name.startswith("openai/"):
        # Local OpenAI-compatible servers (llama.cpp, vLLM, LM Studio) need no key, but the
        # OpenAI client refuses to send a request without one.
        api_key = "no-key-needed"
    options = ProviderOptions(
        api_base=settings.api_base,
        api_key=api_key,
        fallbacks=settings.fallbacks,
        max_retries=settings.max_retries,
        request_timeout=settings.request_timeout,
        cooldowns=cooldowns,
        prompt_caching=settings.prompt_caching,
    )
    form = tool_form(settings.tool_calls, name)
    provider = open_provider(settings.provider_path, name, options, tool_form=form, local=local)
    utility, utility_window = None, None
    if settings.utility and settings.utility != name:
        # Same key and endpoint; when it fails, the turn's own model does the work.
        chain = [m for m in (name, *settings.fallbacks) if m != settings.utility]
        utility_options = dataclasses.replace(options, fallbacks=chain)
        utility_form = tool_form(settings.tool_calls, settings.utility)
        utility = open_provider(
            settings.provider_path, settings.utility, utility_options, tool_form=utility_form
        )
        utility_window = (await fetch_model_info(settings.utility)).context_window
    vision = settings.vision
    if vision is None:
        vision = False if local else await supports_vision(name)
    choice = ModelChoice(
        provider,
        settings.temperature,
        settings.max_tokens,
        vision,
        window,
        small=local is not None or form is not None,
        utility=utility,
        utility_window=utility_window,
    )
    return choice, provider
