"""CPU work on untrusted data, written as short steps the event loop can interleave.

A regex pass, a decode or an HTML parse over a page of megabytes is one long stretch of work. On the
event loop it stalls every session; in `asyncio.to_thread` it still does, because a C call such as
`re.sub` holds the GIL from start to end (and pure-Python work hands the GIL back only every switch
interval, slowing each of the loop's system calls). So such work is a generator that does a bounded
slice per step and `yield`s between slices: `finish` runs it straight through (CLI, threads, tests),
`run_steps` runs it on the loop and lets other tasks in after every step.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import TypeVar

T = TypeVar("T")

# Each `yield` marks a point where the loop may run other work; the value is the result.
Steps = Generator[None, None, T]


def finish(steps: Steps[T]) -> T:
    """The result of `steps`, run without interruption."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


async def run_steps(steps: Steps[T]) -> T:
    """The result of `steps`, letting the event loop run other tasks between steps."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
        await asyncio.sleep(0)
