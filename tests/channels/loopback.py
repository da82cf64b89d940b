"""What the fake platforms share: a Starlette app served on 127.0.0.1 in the test's event loop,
and waiting for something the bot should do.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.routing import BaseRoute
from websockets.exceptions import InvalidState

# Generous: the first turn of a test session pays for importing litellm, on a busy machine.
WAIT = 45.0


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class LoopbackServer:
    """Serves `routes` on 127.0.0.1 (an ephemeral port, kept across a restart)."""

    def __init__(self) -> None:
        self.port = 0
        self._server: _Server | None = None
        self._serving: asyncio.Task[None] | None = None

    async def serve(self, routes: list[BaseRoute], **config: Any) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        settings = uvicorn.Config(
            Starlette(routes=routes),
            lifespan="off",
            log_level="warning",
            timeout_graceful_shutdown=1,
            **config,
        )
        server = self._server = _Server(settings)
        self._serving = asyncio.create_task(server.serve(sockets=[listener]))
        await wait_until(lambda: server.started, "the fake platform to start")

    async def shutdown(self) -> None:
        if self._server is None or self._serving is None:
            return
        self._server.should_exit = True
        # uvicorn may still be closing a WebSocket the client has just closed.
        with contextlib.suppress(InvalidState):
            await self._serving
        self._server = self._serving = None


async def wait_until(
    check: Callable[[], bool], what: str, seen: Callable[[], object] = lambda: ""
) -> None:
    """Poll `check` until it holds; on timeout, say what the fake saw (`seen()`)."""
    deadline = time.monotonic() + WAIT
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; seen: {seen()}")
        await asyncio.sleep(0.02)


async def wait_for_finished(
    texts: Callable[[], list[str]], count: int, what: str, seen: Callable[[], object]
) -> list[str]:
    """Wait for `count` messages of which none is still streaming (marked " …"); their texts."""
    await wait_until(
        lambda: len(texts()) >= count and not any(t.endswith(" …") for t in texts()),
        f"{count} finished message(s) in {what}",
        seen,
    )
    return texts()
