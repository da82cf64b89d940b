"""`model.provider_path`: the provider that serves the configured models (which path a chain
takes is `provider_path.takes_direct_path`).

`direct` speaks the OpenAI chat-completions protocol itself (`DirectProvider`, httpx, no
litellm); `litellm` reaches every provider litellm knows (`LiteLLMProvider`). The chain shares
one provider object because fallbacks share its retries.
"""

from __future__ import annotations

from countbot.llm.direct_provider import DirectProvider, ToolCallForm
from countbot.llm.litellm_provider import LiteLLMProvider
from countbot.llm.local_endpoint import LocalEndpoint
from countbot.llm.provider_options import ProviderOptions
from countbot.llm.provider_path import ProviderPath, takes_direct_path
from countbot.llm.retrying_provider import RetryingProvider


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
