"""A cancel token that reaches the model stream and every running tool.

The original CountBot's cancel set a flag nobody read mid-turn. Here cancelling fires callbacks,
so the loop can abort the model request in flight, and sets an event the tools race against.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


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
