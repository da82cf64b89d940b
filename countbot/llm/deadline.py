"""A deadline over a stream's reads: one timer for a whole model call, not one per chunk.

`asyncio.timeout_at` around each read of a chunk cost time at every chunk (a timeout object, a timer
pushed on the loop's heap and cancelled again), a tenth of a short answer's own time on the direct
path (docs/llm_call.md). It cannot simply enclose the whole call either: the call is an async
generator, and a timeout that fired while it waited at a `yield` would cancel its consumer's work
instead. `Deadline` keeps one timer for the call and lets it cancel only a read in progress; a
deadline that passes between reads is reported at the next one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TypeVar

T = TypeVar("T")


class Deadline:
    """`seconds` from now; read with `next`, and `close` it when the call ends."""

    def __init__(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        self._timer = loop.call_at(loop.time() + seconds, self._expire)
        # The task waiting in `next`, while one is: the one the timer interrupts.
        self._reader: asyncio.Task[object] | None = None
        self.expired = False

    def _expire(self) -> None:
        self.expired = True
        if self._reader is not None:
            self._reader.cancel()

    async def next(self, items: AsyncIterator[T]) -> T | None:
        """The next item of `items` (None at its end); `TimeoutError` once the deadline passed.

        A cancel from anyone else stays a cancel, as with `asyncio.timeout`.
        """
        if self.expired:
            raise TimeoutError
        task = asyncio.current_task()
        assert task is not None
        cancelling = task.cancelling()
        self._reader = task
        try:
            return await anext(items, None)
        except asyncio.CancelledError:
            if self.expired and task.uncancel() <= cancelling:
                raise TimeoutError from None
            raise
        finally:
            self._reader = None

    def close(self) -> None:
        self._timer.cancel()
