"""Which model strings reach an endpoint that speaks OpenAI's chat-completions protocol, and where.

The direct provider serves exactly these; everything else goes through litellm. Each entry says
where the provider's compatible endpoint lives, which environment variables override its address
and hold its key (the same names litellm reads, so a working litellm setup works unchanged), and
whether it refuses requests without a key (hosted services) or runs without one (local servers).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from countbot.llm.model_info import provider_of


@dataclass(frozen=True, slots=True)
class Compatible:
    """One provider prefix: its default base URL (None: `api_base` is required) and env names."""

    base_url: str | None
    key_env: str | None
    base_env: str | None
    needs_key: bool = True


# Prefix of the model string -> endpoint. "ollama" and "ollama_chat" use Ollama's /v1 (its
# OpenAI-compatible API) where litellm uses the native /api/chat: same models, same answers.
COMPATIBLE: dict[str, Compatible] = {
    "openai": Compatible("https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_API_BASE"),
    "deepseek": Compatible("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "DEEPSEEK_API_BASE"),
    "dashscope": Compatible(
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        "DASHSCOPE_API_KEY",
        "DASHSCOPE_API_BASE",
    ),
    "moonshot": Compatible("https://api.moonshot.ai/v1", "MOONSHOT_API_KEY", "MOONSHOT_API_BASE"),
    "zai": Compatible("https://api.z.ai/api/paas/v4", "ZAI_API_KEY", "ZAI_API_BASE"),
    # Zhipu's mainland endpoint (litellm knows only its international "zai"): direct path only.
    "zhipu": Compatible(
        "https://open.bigmodel.cn/api/paas/v4", "ZHIPUAI_API_KEY", "ZHIPUAI_API_BASE"
    ),
    "openrouter": Compatible(
        "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", "OPENROUTER_API_BASE"
    ),
    "groq": Compatible("https://api.groq.com/openai/v1", "GROQ_API_KEY", "GROQ_API_BASE"),
    "ollama": Compatible("http://localhost:11434/v1", None, "OLLAMA_API_BASE", needs_key=False),
    "ollama_chat": Compatible(
        "http://localhost:11434/v1", None, "OLLAMA_API_BASE", needs_key=False
    ),
    "hosted_vllm": Compatible(None, "HOSTED_VLLM_API_KEY", "HOSTED_VLLM_API_BASE", needs_key=False),
    # A model run by CountBot itself (countbot/local_model): its child server's address is known
    # only once it runs, so DirectProvider asks the server, never this table, for it.
    "local": Compatible(None, None, None, needs_key=False),
    "lm_studio": Compatible(
        "http://localhost:1234/v1", "LM_STUDIO_API_KEY", "LM_STUDIO_API_BASE", needs_key=False
    ),
}


class EndpointError(ValueError):
    """A configuration mistake the direct provider can name before sending anything."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where one model's requests go: the chat-completions URL, the wire model name, the key."""

    provider: str
    url: str
    wire_model: str
    api_key: str | None


def prefix_of(model: str) -> str:
    """The provider prefix of a model string ("" when it has none)."""
    return model.split("/", 1)[0] if "/" in model else ""


def is_compatible(model: str, api_base: str | None = None) -> bool:
    """Whether `model` names an OpenAI-compatible endpoint: by its prefix; for a bare name, by
    the provider the model map gives it ("gpt-4o"), or any unknown name served at `api_base`."""
    if prefix_of(model):
        return prefix_of(model) in COMPATIBLE
    provider = provider_of(model)
    return provider in COMPATIBLE or (provider == "unknown" and bool(api_base))


def unknown_provider(model: str, *, fallback: bool = False) -> str:
    """What to tell the user when no provider serves `model` (a primary or a fallback model)."""
    key = "model.fallbacks" if fallback else "model.name"
    prefix = prefix_of(model)
    if not prefix:
        return f"{key} '{model}' names no provider: write it as provider/model, e.g. openai/{model}"
    return f"unknown provider '{prefix}' in {key} ('{model}')"


def resolve_endpoint(
    model: str, api_base: str | None, api_key: str | None, *, fallback: bool = False
) -> Endpoint:
    """The endpoint for `model`, or `EndpointError` saying what in the configuration is wrong.

    A configured `api_base` wins over the provider's default and its environment variable; the
    key comes from `api_key`, else the provider's variable. Hosted providers without a key fail
    here, before a request that could only come back 401.
    """
    prefix = prefix_of(model)
    wire_model = model.split("/", 1)[1] if prefix else model
    prefix = prefix or provider_of(model)
    if prefix == "unknown" and api_base:
        prefix = "openai"  # a bare model name served at a configured address
    entry = COMPATIBLE.get(prefix)
    if entry is None:
        raise EndpointError(unknown_provider(model, fallback=fallback))
    base = api_base or (os.environ.get(entry.base_env) if entry.base_env else None)
    base = base or entry.base_url
    if not base:
        raise EndpointError(
            f"{prefix} needs the server's address: set model.api_base "
            f"(or the {entry.base_env} environment variable)"
        )
    key = api_key or (os.environ.get(entry.key_env) if entry.key_env else None) or None
    if key is None and entry.needs_key and not api_base:
        hint = f" or the {entry.key_env} environment variable" if entry.key_env else ""
        raise EndpointError(f"no API key for {prefix}: set model.api_key{hint}")
    return Endpoint(prefix, chat_completions_url(base), wire_model, key)


def chat_completions_url(base: str) -> str:
    """`base` with `/chat/completions` appended unless it is already there."""
    base = base.rstrip("/")
    return base if base.endswith("/chat/completions") else base + "/chat/completions"
