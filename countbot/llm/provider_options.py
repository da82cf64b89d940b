"""How a provider reaches its models and how hard it tries: one option set for every provider."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from countbot.llm.cooldown import Cooldowns


@dataclass(frozen=True, slots=True)
class ProviderOptions:
    """The options `RetryingProvider` and its subclasses share (direct and litellm alike).

    `request_timeout` bounds each attempt as a whole, streaming included; `cooldowns` outlive a
    provider rebuilt by a settings change; `sleep` and `rng` pace the retries (tests pass
    their own).
    """

    api_base: str | None = None
    api_key: str | None = None
    fallbacks: Sequence[str] = ()
    max_retries: int = 3
    request_timeout: float = 120.0
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    # Cache breakpoints for models that need them (`llm/prompt_cache.py`).
    prompt_caching: bool = True
    cooldowns: Cooldowns | None = None
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep
    rng: Callable[[], float] = random.random
