"""uvicorn's HTTP protocol with a bound on the request head, and answers a client can read.

httptools accepts headers of any size (a header of megabytes was taken in whole). This subclass
counts the head's bytes as they arrive and, past `web.max_header_bytes`, answers 431 and closes the
connection before the rest is buffered. Bodies are bounded per route by `BodyLimits`, which answers
413 before reading them; when that answer ends the connection (the client sent `Connection: close`),
closing at once with the body still arriving makes the kernel reset the connection, and a client
that sends its whole body before reading (Python's http.client) never sees the 413. So such a close
waits, with our side shut for writing, until the rest of the body has been read and thrown away, at
most `DRAIN_BYTES` or `_DRAIN_SECONDS`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from countbot.speedups.uvicorn_parts import HttpToolsProtocol

_HEAD_END = b"\r\n\r\n"
_DRAIN_SECONDS = 2.0
# How much of a refused body is read and thrown away before the connection closes.
DRAIN_BYTES = 64 * 1024 * 1024
_BODY_DRAIN_SECONDS = 30.0


class _CloseAfterBody:
    """The transport as uvicorn's request cycle sees it: `close` waits for the request's body."""

    def __init__(self, transport: asyncio.Transport, protocol: BoundedHeadProtocol) -> None:
        self._transport = transport
        self._protocol = protocol

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def close(self) -> None:
        self._protocol.close_after_body()


class BoundedHeadProtocol(HttpToolsProtocol):
    """`HttpToolsProtocol` refusing a request head larger than `max_head` bytes with 431."""

    max_head = 65_536

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_size = 0
        self._in_head = True
        self._tail = b""
        self._refused = False
        self._body_done = True
        self._draining = -1  # bytes of body read after the answer; -1: not draining

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # discarded: the client is still sending what we refused
        if self._draining >= 0 and not self._body_done:
            self._draining += len(data)
            if self._draining > DRAIN_BYTES:
                self.transport.close()
                return
        if self._in_head:
            window = self._tail + data
            end = window.find(_HEAD_END)
            counted = len(data) if end < 0 else max(0, end + len(_HEAD_END) - len(self._tail))
            self._head_size += counted
            if self._head_size > self.max_head:
                self._refuse()
                return
            self._tail = window[-3:]
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._in_head, self._body_done, self._draining = False, False, -1
        super().on_headers_complete()
        if self.cycle is not None:
            self.cycle.transport = _CloseAfterBody(self.transport, self)  # type: ignore[assignment]

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head, self._head_size, self._tail = True, 0, b""
        self._body_done = True
        if self._draining >= 0:
            self.transport.close()

    def close_after_body(self) -> None:
        """Close now if the request's body has been read, else once it has (bounded)."""
        if self._body_done or self.transport.is_closing():
            self.transport.close()
            return
        self._draining = 0
        if self.transport.can_write_eof():
            self.transport.write_eof()
        asyncio.get_running_loop().call_later(_BODY_DRAIN_SECONDS, self.transport.close)

    def _refuse(self) -> None:
        message = b"request header fields too large"
        transport: asyncio.Transport = self.transport
        transport.write(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: text/plain; charset=utf-8\r\n"
            b"content-length: " + str(len(message)).encode() + b"\r\n"
            b"connection: close\r\n\r\n" + message
        )
        # Half-close and drain for a moment instead of closing at once: closing with unread
        # input makes the kernel reset the connection, and the client would never see the 431.
        self._refused = True
        if transport.can_write_eof():
            transport.write_eof()
        asyncio.get_running_loop().call_later(_DRAIN_SECONDS, transport.close)


def bounded_head_protocol(max_head: int) -> type[BoundedHeadProtocol]:
    """A protocol class for uvicorn's `http=` option with the limit `max_head` bytes."""
    return type("BoundedHeadProtocol", (BoundedHeadProtocol,), {"max_head": max_head})
