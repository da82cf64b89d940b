"""Hand the heap a burst of turns freed back to the system once the daemon is quiet (glibc).

Turns allocate in several threads (the event loop, the database's, the worker threads'), and
glibc keeps what they free in one arena per thread instead of returning it. `malloc_trim(0)`
returns the free pages of every arena (`bench/cold_start.py`, docs/cold_start.md). It
runs once per busy spell, when no turn has run for a poll interval, in a worker thread; ctypes,
which reaches it, is loaded there at the first turn (an idle daemon never needs it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from countbot.common.heap import MMAP_THRESHOLD

M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)
QUIET = 1.0  # s between looks; a trim follows the first look that finds no turn running


def malloc_trim() -> Callable[[], object] | None:
    """glibc's `malloc_trim(0)`, or None where the C library has none (musl, macOS).

    Found once, at the first turn; glibc's threshold for mapping big blocks on their own is
    fixed then too (common/heap.py: the heap fragments less, so there is less to trim).
    """
    import ctypes  # loaded at the first turn, in a worker thread

    try:
        libc = ctypes.CDLL(None)  # the process's own symbols, libc's among them
        trim, mallopt = libc.malloc_trim, libc.mallopt
    except (OSError, AttributeError):
        return None
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    return lambda: trim(0)


async def trim_when_quiet(
    turns: Callable[[], tuple[int, int]],
    trim: Callable[[], object] | None = None,
    interval: float = QUIET,
) -> None:
    """Until cancelled: after turns ended (`turns()` is how many run now and how many ended so
    far) and none runs, `trim` once (by default glibc's, found at the first look that sees a
    turn: its big-block threshold is then fixed before the turns' heap has grown)."""
    trimmed_at = 0
    while True:
        await asyncio.sleep(interval)
        running, ended = turns()
        if trim is None and (running or ended):
            trim = await asyncio.to_thread(malloc_trim)
            if trim is None:
                return
        if trim is not None and not running and ended != trimmed_at:
            trimmed_at = ended
            await asyncio.to_thread(trim)
