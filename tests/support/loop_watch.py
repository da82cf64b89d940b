"""How responsive the event loop stayed while something hostile was processed.

`LoopWatch` runs a task that asks to wake every `interval` seconds and records how late each wake
came: the worst lateness is the longest time every other session had to wait. `health_latency`
does the same from outside, timing `/api/health` of a real daemon. Tests assert a generous bound
(the machine is shared); `bench/hostile_inputs.py` reports the real numbers.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from types import TracebackType

import httpx

# What tests accept as "the loop stayed responsive"; far above the bench's 50 ms target, so a
# busy machine (two cores shared by several test runs) does not fail a test, far below the
# seconds a quadratic scan or a decompression bomb used to take.
RESPONSIVE = 0.5


class LoopWatch:
    """`async with LoopWatch() as watch: ...`, then read `watch.worst` (seconds)."""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.worst = 0.0
        self.ticks = 0
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> LoopWatch:
        self._task = asyncio.create_task(self._tick())
        await asyncio.sleep(0)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _tick(self) -> None:
        while True:
            asked = time.perf_counter()
            await asyncio.sleep(self.interval)
            late = time.perf_counter() - asked - self.interval
            self.worst = max(self.worst, late)
            self.ticks += 1


async def health_latency(base_url: str, headers: dict[str, str], until: asyncio.Task) -> float:
    """The slowest `/api/health` answer (seconds) while `until` runs, over its own connection."""
    worst = 0.0
    async with httpx.AsyncClient(base_url=base_url, trust_env=False, timeout=30) as http:
        await http.get("/api/health", headers=headers)  # connect first: time answers only
        while not until.done():
            started = time.perf_counter()
            response = await http.get("/api/health", headers=headers)
            response.raise_for_status()
            worst = max(worst, time.perf_counter() - started)
            await asyncio.sleep(0.01)
    return worst
