"""The daemon's heap trim: once after a busy spell, never while a turn runs, never for nothing."""

from __future__ import annotations

import asyncio

from countbot.speedups.heap_trim import malloc_trim, trim_when_quiet


async def test_trims_once_after_turns_end_and_not_while_one_runs() -> None:
    state = {"running": 0, "ended": 0}
    trims: list[tuple[int, int]] = []

    def trim() -> None:
        trims.append((state["running"], state["ended"]))

    task = asyncio.create_task(
        trim_when_quiet(lambda: (state["running"], state["ended"]), trim, interval=0.01)
    )
    try:
        await asyncio.sleep(0.05)
        assert trims == []  # nothing ran yet: nothing to hand back
        state["running"] = 1
        await asyncio.sleep(0.05)
        assert trims == []  # a turn is running
        state["running"], state["ended"] = 0, 1
        await asyncio.sleep(0.05)
        assert trims == [(0, 1)]  # once, however long the quiet lasts
        state["ended"] = 3  # two short turns ended between two looks
        await asyncio.sleep(0.05)
        assert trims == [(0, 1), (0, 3)]
    finally:
        task.cancel()


def test_glibc_trim_is_found_and_callable() -> None:
    trim = malloc_trim()
    assert trim is not None  # CI runs on glibc
    trim()
