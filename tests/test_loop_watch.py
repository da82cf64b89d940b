"""The loop probe the responsiveness tests use: it sees a stall the process makes, however loaded
the machine is, and leaves out the time the machine made the loop wait for a core."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import pytest

from tests.support.loop_watch import LoopWatch


async def test_a_blocked_loop_is_its_own_stall() -> None:
    async with LoopWatch() as watch:
        await asyncio.sleep(0.05)
        time.sleep(0.3)  # noqa: ASYNC251 - the blocking call on the loop under test
        await asyncio.sleep(0.05)
    assert 0.29 <= watch.worst <= watch.worst_wall


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
async def test_waiting_for_a_busy_core_is_not_the_loops_own_stall() -> None:
    core = min(os.sched_getaffinity(0))
    spin = f"import os; os.sched_setaffinity(0, {{{core}}})\nwhile True: pass"
    rivals = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(3)]  # noqa: ASYNC220
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {core})  # this thread (the loop's) shares one core with three spinners
    try:
        await asyncio.sleep(0.3)  # the spinners are up
        async with LoopWatch() as watch:
            await asyncio.sleep(1.0)  # an idle loop: nothing of its own to stall it
    finally:
        os.sched_setaffinity(0, allowed)
        for rival in rivals:
            rival.kill()
            rival.wait()
    # Summed over every wake, not the single worst one: a lone collector pause of the test process
    # must not decide it; the three spinners' share of the core dominates the clock's lateness.
    assert watch.total_wall > 2 * watch.total, (watch.total, watch.total_wall)
