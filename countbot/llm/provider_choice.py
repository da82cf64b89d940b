"""`model.provider_path`: which provider serves the configured models.

`direct` speaks the OpenAI chat-completions protocol itself (`DirectProvider`, httpx, no
litellm); `litellm` reaches every provider litellm knows (`LiteLLMProvider`); `auto` takes the
direct path when every model of the chain (the primary and its fallbacks) names an endpoint that
speaks that protocol (`openai_compatible.COMPATIBLE`, or any name behind `api_base`), litellm
otherwise. The chain shares one provider object because fallbacks share its retries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from countbot.llm.direct_provider import DirectProvider, ToolCallForm
from countbot.llm.litellm_provider import LiteLLMProvider
from countbot.llm.local_endpoint import LocalEndpoint
from countbot.llm.openai_compatible import is_compatible
from countbot.llm.provider_options import ProviderOptions
from countbot.llm.retrying_provider import RetryingProvider

ProviderPath = Literal["auto", "direct", "litellm"]


def is_local(model: str) -> bool:
    """Whether `model` is run by CountBot itself (`local/<name-or-file.gguf>`)."""
    return model.startswith("local/")


def takes_direct_path(
    path: ProviderPath, model: str, fallbacks: Sequence[str] = (), api_base: str | None = None
) -> bool:
    """Whether `open_provider` would serve this chain without litellm (always for local/)."""
    if is_local(model):
        return True
    if path != "auto":
        return path == "direct"
    return all(is_compatible(name, api_base) for name in (model, *fallbacks))


def open_provider(
    path: ProviderPath,
    model: str,
    options: ProviderOptions | None = None,
    *,
    tool_form: ToolCallForm | None = None,
    local: LocalEndpoint | None = None,
) -> RetryingProvider:
    """The provider for `model` and the options' fallbacks on the chosen path; a `local/` model
    is served by its child server `local` on the direct path (litellm could not find its port).
    `tool_form` shapes tool calls on the direct path (constrained calls); litellm's are native."""
    options = options or ProviderOptions()
    if takes_direct_path(path, model, options.fallbacks, options.api_base):
        return DirectProvider(model, options, local=local, tool_form=tool_form)
    return LiteLLMProvider(model, options)
