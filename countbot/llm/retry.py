"""When to try a failed model call again: exponential backoff with full jitter, Retry-After first.

A policy object with its clock and randomness injected, so tests can check every wait without
waiting.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Up to `max_retries` retries; retry n waits U(0, min(max_delay, base_delay * 2**(n-1))).

    A provider's Retry-After replaces the backoff but is capped at `max_retry_after`, so a
    provider asking for an hour cannot stall a conversation.
    """

    max_retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 60.0
    sleep: Callable[[float], Awaitable[object]] = field(default=asyncio.sleep, repr=False)
    rng: Callable[[], float] = field(default=random.random, repr=False)

    def delay(self, retry: int, retry_after: float | None = None) -> float | None:
        """Seconds to wait before retry number `retry` (1-based), or None when out of retries."""
        if retry < 1 or retry > self.max_retries:
            return None
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        return self.rng() * min(self.max_delay, self.base_delay * 2 ** (retry - 1))
