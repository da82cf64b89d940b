"""A loopback chat-completions endpoint that records request headers and connections (the
scripted server keeps only bodies), for checks on what reaches the wire besides the JSON."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

_CHUNK = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1,
    "model": "test-model",
    "choices": [
        {"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
}
_BODY = f"data: {json.dumps(_CHUNK)}\n\ndata: [DONE]\n\n".encode()
_RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: keep-alive\r\n"
    + f"Content-Length: {len(_BODY)}\r\n\r\n".encode()
    + _BODY
)


@dataclass
class HeaderRecorder:
    """Where to send requests; the headers of each one received (names lower-cased), and how
    many TCP connections they came over."""

    base_url: str = ""
    requests: list[dict[str, str]] = field(default_factory=list)
    connections: int = 0


@pytest.fixture
async def header_recorder() -> AsyncIterator[HeaderRecorder]:
    recorder = HeaderRecorder()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        recorder.connections += 1
        try:
            while headers := await _read_request(reader):
                recorder.requests.append(headers)
                writer.write(_RESPONSE)
                await writer.drain()
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    recorder.base_url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    async with server:
        yield recorder


async def _read_request(reader: asyncio.StreamReader) -> dict[str, str] | None:
    """The next request's headers (its body read and dropped); None once the client hangs up."""
    try:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")[1:]
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    headers = {}
    for line in filter(None, head):
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    await reader.readexactly(int(headers.get("content-length", "0")))
    return headers
