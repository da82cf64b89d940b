"""A cancel token that reaches the model stream and every running tool.

The original CountBot's cancel set a flag nobody read mid-turn. Here cancelling fires callbacks,
so the loop can abort the model request in flight, and sets an event the tools race against.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

T = TypeVar("T")


class CancelToken:
    """One per turn. `cancel()` is idempotent and safe to call from any coroutine."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.reason = ""
        self._callbacks: list[Callable[[], object]] = []

    @property
    def cancelled(self) -> bool:
        return self.event.is_set()

    def cancel(self, reason: str = "cancelled") -> None:
        if self.event.is_set():
            return
        self.reason = reason
        self.event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def on_cancel(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Run `callback` on cancel (at once if already cancelled); returns an unregister."""
        if self.event.is_set():
            callback()
            return lambda: None
        self._callbacks.append(callback)

        def unregister() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unregister

    async def wait(self) -> None:
        await self.event.wait()


async def while_running(
    work: asyncio.Task[Any], shown: asyncio.Queue[T], token: CancelToken
) -> AsyncIterator[T]:
    """Yield what `work` puts into `shown` while it runs; cancelling `token` cancels `work`.

    For the work of a turn that is not a model stream (a summary before the turn): the user sees
    its notices as they come and a Stop ends it at once. A failure of `work` is raised here.
    """
    unregister = token.on_cancel(work.cancel)
    try:
        # Most work (a warm window, read from memory) ends in its first step: one pass of the
        # loop lets it run, and then no waiter task is made at all.
        await asyncio.sleep(0)
        while not work.done():
            getter = asyncio.ensure_future(shown.get())
            await asyncio.wait({work, getter}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                yield getter.result()
            else:
                getter.cancel()
        while not shown.empty():
            yield shown.get_nowait()
        if not work.cancelled():
            work.result()
    finally:
        unregister()
        if not work.done():
            work.cancel()
            await asyncio.gather(work, return_exceptions=True)
