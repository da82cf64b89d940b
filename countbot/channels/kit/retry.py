"""Sending with the platform's consent: wait as long as it asks (a flood limit), back off on
transient failures, give up at once on permanent ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from countbot.channels.kit.backoff import Backoff
from countbot.channels.kit.base import SendError

T = TypeVar("T")

# A caller asked to pause longer than this gets a failure back instead of a stuck sender.
LONGEST_WAIT = 60.0


async def send_retrying(
    send: Callable[[], Awaitable[T]], *, attempts: int = 3, longest_wait: float = LONGEST_WAIT
) -> T:
    """`send()`, tried up to `attempts` times; raises the last `SendError`."""
    backoff = Backoff(1.0, 30.0)
    for attempt in range(1, attempts + 1):
        try:
            return await send()
        except SendError as exc:
            delay = exc.retry_after if exc.retry_after is not None else backoff.next()
            if exc.permanent or attempt == attempts or delay > longest_wait:
                raise
            await asyncio.sleep(delay)
    raise AssertionError("unreachable: the last attempt returns or raises")
