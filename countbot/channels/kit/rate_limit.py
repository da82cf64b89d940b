"""A per-sender flood limit, so a runaway client or a spammer cannot run up the model bill."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from enum import Enum

WINDOW = 60.0


class RateVerdict(Enum):
    ALLOW = "allow"
    # Over the limit: drop the message and tell the sender (once per window).
    WARN = "warn"
    # Over the limit and already told: drop it silently.
    DROP = "drop"


class RateLimiter:
    """At most `per_minute` messages per sender in any sliding 60-second window."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._limit = per_minute
        self._clock = clock
        self._recent: dict[str, deque[float]] = {}
        self._warned_until: dict[str, float] = {}

    def check(self, sender_id: str) -> RateVerdict:
        now = self._clock()
        recent = self._recent.setdefault(sender_id, deque())
        while recent and recent[0] <= now - WINDOW:
            recent.popleft()
        if len(recent) < self._limit:
            recent.append(now)
            self._forget_idle(now)
            return RateVerdict.ALLOW
        if self._warned_until.get(sender_id, 0.0) > now:
            return RateVerdict.DROP
        self._warned_until[sender_id] = recent[0] + WINDOW
        return RateVerdict.WARN

    def _forget_idle(self, now: float) -> None:
        # Bounded memory: a sender with nothing in the window costs nothing.
        if len(self._recent) > 1024:
            for sender in [s for s, ts in self._recent.items() if not ts or ts[-1] <= now - WINDOW]:
                del self._recent[sender]
                self._warned_until.pop(sender, None)
