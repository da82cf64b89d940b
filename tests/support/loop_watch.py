"""How responsive the event loop stayed while something hostile was processed.

`LoopWatch` runs a task that asks to wake every `interval` seconds and records how late each wake
came: the worst lateness is the longest time every other session had to wait. On a shared
machine part of that wait is the machine's load: the loop's thread, ready to run, waited for a
core. Linux counts that time per thread (`/proc/self/task/<tid>/schedstat`, its second field), so
`worst` is each wake's lateness less what the thread waited in the run queue meanwhile: the stall
the process caused itself (a long step, a blocking call, a worker thread holding the GIL), which
the load neither adds to nor hides. `worst_wall` keeps the lateness as a clock saw it; `total` and
`total_wall` sum the same over every wake.
`health_latency` times `/api/health` of a real daemon from outside. Tests assert a generous bound
on `worst`; `bench/hostile_inputs.py` reports the real numbers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from types import TracebackType

import httpx

# What tests accept as "the loop stayed responsive" (the process's own stall, the load's taken
# out); far above the bench's 50 ms target, far below the seconds a quadratic scan or a
# decompression bomb used to take.
RESPONSIVE = 0.5


class LoopWatch:
    """`async with LoopWatch() as watch: ...`, then read `watch.worst` (seconds)."""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.worst = 0.0
        self.worst_wall = 0.0
        self.total = 0.0
        self.total_wall = 0.0
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
        with _RunQueue() as queue:
            while True:
                asked, waited = time.perf_counter(), queue.waited()
                await asyncio.sleep(self.interval)
                late = time.perf_counter() - asked - self.interval
                own = late - (queue.waited() - waited)
                self.worst, self.worst_wall = max(self.worst, own), max(self.worst_wall, late)
                self.total, self.total_wall = self.total + own, self.total_wall + late
                self.ticks += 1

    def describe(self) -> str:
        """For an assertion's message."""
        return (
            f"the loop stalled {self.worst * 1000:.0f} ms of its own "
            f"({self.worst_wall * 1000:.0f} ms by the clock, the load's wait included)"
        )


class _RunQueue:
    """How long the thread that opened it has waited, ready to run, for a core (always 0 where
    the system does not say)."""

    def __enter__(self) -> _RunQueue:
        path = f"/proc/self/task/{threading.get_native_id()}/schedstat"
        try:
            self._fd: int | None = os.open(path, os.O_RDONLY)
        except OSError:
            self._fd = None
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)

    def waited(self) -> float:
        """Seconds, since the thread started."""
        if self._fd is None:
            return 0.0
        return int(os.pread(self._fd, 128, 0).split()[1]) / 1e9


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
