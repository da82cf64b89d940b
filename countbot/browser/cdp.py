"""A small Chrome DevTools Protocol client over the pipe Chromium was started with.

Chromium reads commands on its fd 3 and writes answers and events on its fd 4, each a JSON
message ending in a NUL byte (`--remote-debugging-pipe`). A pipe, not a port: no other local
process can reach the browser (and its logins), and the connection exists before the process
starts, so there is no window in which the browser "cannot be reached yet".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

# One CDP message may carry a full-page screenshot.
_MAX_MESSAGE = 64 * 1024 * 1024

EventHandler = Callable[[str, dict[str, Any], str | None], None]


class CdpError(Exception):
    """A command Chromium answered with an error, or a connection that ended."""


class ConnectionClosed(CdpError):
    """The browser went away (it exited, or the pipe was closed)."""


@dataclass(slots=True)
class _Pipes:
    reader: asyncio.StreamReader
    writer: asyncio.WriteTransport


class CdpConnection:
    """Commands with answers awaited by id; events handed to the listeners as they arrive."""

    def __init__(self, pipes: _Pipes) -> None:
        self._pipes = pipes
        self._next_id = 0
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._listeners: list[EventHandler] = []
        self._reading = asyncio.create_task(self._read())
        self.closed = asyncio.Event()

    @classmethod
    async def over_pipes(cls, read_fd: int, write_fd: int) -> CdpConnection:
        """Take ownership of the two pipe ends (ours: what Chromium writes, what it reads)."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_MAX_MESSAGE)
        # Pipe ends never block on open; the transports own (and close) the file objects.
        reading = os.fdopen(read_fd, "rb", buffering=0)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), reading)
        writing = os.fdopen(write_fd, "wb", buffering=0)
        writer, _ = await loop.connect_write_pipe(asyncio.Protocol, writing)
        return cls(_Pipes(reader, writer))

    def listen(self, handler: EventHandler) -> Callable[[], None]:
        """Call `handler(method, params, session_id)` for every event; returns the unsubscribe."""
        self._listeners.append(handler)
        return lambda: self._listeners.remove(handler) if handler in self._listeners else None

    async def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        """Run one command (on a page's `session` when given) and return its result."""
        if self.closed.is_set():
            raise ConnectionClosed("the browser is not running")
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        answer = asyncio.get_running_loop().create_future()
        self._waiting[self._next_id] = answer
        try:
            self._pipes.writer.write(json.dumps(message).encode() + b"\0")
            reply = await answer
        finally:
            self._waiting.pop(message["id"], None)
        if "error" in reply:
            raise CdpError(f"{method}: {reply['error'].get('message', reply['error'])}")
        return reply.get("result", {})

    async def _read(self) -> None:
        reader = self._pipes.reader
        try:
            while True:
                raw = await reader.readuntil(b"\0")
                self._dispatch(json.loads(raw[:-1]))
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        except Exception:  # a bug here must end the connection, not leave callers waiting
            log.exception("reading from the browser failed")
        finally:
            self._end()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "id" in message:
            waiting = self._waiting.get(message["id"])
            if waiting is not None and not waiting.done():
                waiting.set_result(message)
            return
        method, params = message.get("method", ""), message.get("params", {})
        for handler in list(self._listeners):
            try:
                handler(method, params, message.get("sessionId"))
            except Exception:
                log.exception("a browser event handler failed on %s", method)

    def _end(self) -> None:
        self.closed.set()
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_exception(ConnectionClosed("the browser exited"))
        self._waiting.clear()
        with contextlib.suppress(Exception):
            self._pipes.writer.close()

    async def close(self) -> None:
        self._end()
        self._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading
