"""Runs a platform SDK that wants an event loop of its own, and stops it even if it would not.

Some SDKs block (`start()` runs its own loop forever), bind a loop at import, make blocking HTTP
calls between awaits, or swallow cancellation and reconnect. Each gets a fresh loop in a thread
of its own per run: the daemon's loop never waits on it, and stopping it means stopping that
loop (which no SDK code can catch), then closing what it left open. Its callbacks reach the
daemon's loop with `asyncio.run_coroutine_threadsafe`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

CLEANUP_TIMEOUT = 5.0


class SdkStopped(Exception):
    """The SDK's loop ended without the SDK saying why."""


class SdkThread:
    """`main(loop)` is the SDK's blocking entry point, run on `loop` in a new thread;
    `cleanup()` (a coroutine on that loop) closes its connection once it was stopped."""

    def __init__(
        self,
        name: str,
        main: Callable[[asyncio.AbstractEventLoop], object],
        cleanup: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        self._name = name
        self._main = main
        self._cleanup = cleanup
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = False

    async def run(self) -> None:
        """Run the SDK until cancelled; raises what ended it otherwise."""
        ended: concurrent.futures.Future[None] = concurrent.futures.Future()
        started = threading.Event()
        thread = threading.Thread(
            target=self._thread, args=(ended, started), name=self._name, daemon=True
        )
        thread.start()
        try:
            await asyncio.to_thread(started.wait)
            await asyncio.wrap_future(ended)
        finally:
            self.stop()
            await asyncio.to_thread(thread.join, CLEANUP_TIMEOUT * 2)

    def _thread(self, ended: concurrent.futures.Future[None], started: threading.Event) -> None:
        loop = self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        started.set()
        outcome: BaseException | None = SdkStopped(f"{self._name} stopped")
        try:
            self._main(loop)
        except BaseException as exc:  # the SDK gave up (bad credentials), or we stopped it
            outcome = None if self._stopping else exc
        finally:
            self._close(loop)
        if not ended.done():  # it is cancelled when the daemon stopped the channel
            if outcome is None:
                ended.set_result(None)
            else:
                ended.set_exception(
                    outcome if isinstance(outcome, Exception) else SdkStopped(repr(outcome))
                )

    def _close(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._cleanup is not None:
            try:
                loop.run_until_complete(asyncio.wait_for(self._cleanup(), CLEANUP_TIMEOUT))
            except Exception:
                log.debug("closing %s failed", self._name, exc_info=True)
        for task in asyncio.all_tasks(loop):
            task.cancel()
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.sleep(0))
        loop.close()

    def stop(self) -> None:
        """End the SDK's loop (from any thread); its cleanup then closes the connection."""
        self._stopping = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # it closed meanwhile
                loop.call_soon_threadsafe(loop.stop)
