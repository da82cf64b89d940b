"""`model.provider_path`: which path serves the configured models, decided from their names alone.

`direct` speaks the OpenAI chat-completions protocol itself (no litellm); `litellm` reaches every
provider litellm knows; `auto` takes the direct path when every model of the chain (the primary
and its fallbacks) names an endpoint that speaks that protocol (`openai_compatible.COMPATIBLE`,
or any name behind `api_base`), litellm otherwise. Apart from the providers themselves
(`provider_choice.py`), so what only asks which path a model takes loads neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from countbot.llm.openai_compatible import is_compatible

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
