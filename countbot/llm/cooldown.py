"""Models that just failed with an outage or a rate limit rest for a while: failover that remembers.

Without memory every turn would wait through the same retries on a model that is down before
reaching its fallback. A model that exhausted its retries on a retryable failure (rate limit,
server error, timeout, unreachable) is put on cooldown, doubling with each failure in a row up to
a cap; while it rests, calls go straight to the next model of the chain. A success ends it. Kept
in memory: a restart gives every model a fresh chance.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

BASE_SECONDS = 30.0
MAX_SECONDS = 900.0


@dataclass(slots=True)
class _State:
    failures: int
    until: float
    reason: str


@dataclass(frozen=True, slots=True)
class Cooldown:
    """A resting model, for the Settings page."""

    model: str
    seconds_left: float
    failures: int
    reason: str


class Cooldowns:
    """Which models rest, and until when (shared by every provider the resolver builds)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._states: dict[str, _State] = {}

    def failed(self, model: str, reason: str) -> None:
        state = self._states.get(model)
        failures = state.failures + 1 if state else 1
        seconds = min(BASE_SECONDS * 2 ** (failures - 1), MAX_SECONDS)
        self._states[model] = _State(failures, self._clock() + seconds, reason)

    def succeeded(self, model: str) -> None:
        self._states.pop(model, None)

    def clear(self) -> None:
        """Every model gets a fresh chance: its settings (key, address, name) were just changed,
        so the failures that rested it say nothing about the model as configured now."""
        self._states.clear()

    def order(self, models: Sequence[str]) -> list[str]:
        """`models` with the resting ones moved last (soonest back first): all stay reachable."""
        now = self._clock()
        ready = [m for m in models if not self._resting(m, now)]
        resting = sorted((m for m in models if self._resting(m, now)), key=self._until)
        return ready + resting

    def current(self) -> list[Cooldown]:
        now = self._clock()
        return [
            Cooldown(model, state.until - now, state.failures, state.reason)
            for model, state in self._states.items()
            if state.until > now
        ]

    def _resting(self, model: str, now: float) -> bool:
        state = self._states.get(model)
        return state is not None and state.until > now

    def _until(self, model: str) -> float:
        return self._states[model].until
