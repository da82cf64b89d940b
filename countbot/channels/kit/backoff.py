"""Exponential backoff for reconnecting and restarting channels."""

from __future__ import annotations


class Backoff:
    """Delays of `initial`, then times `factor`, up to `maximum`; `reset` after a success."""

    def __init__(self, initial: float = 1.0, maximum: float = 300.0, factor: float = 2.0) -> None:
        self._initial = initial
        self._maximum = maximum
        self._factor = factor
        self._next = initial

    def next(self) -> float:
        delay = self._next
        self._next = min(self._maximum, self._next * self._factor)
        return delay

    def reset(self) -> None:
        self._next = self._initial
