"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for tests and benchmarks.

It speaks just enough HTTP/1.1 (keep-alive, chunked SSE) for litellm's OpenAI client, runs on
its own event loop in a background thread so sync, async and subprocess callers can all use it,
and answers each POST /v1/chat/completions with the next scripted `Reply`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

ReplyKind = Literal["text", "tool_calls", "error", "hang", "drop", "cut", "body", "completion"]

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    409: "Conflict",
    413: "Payload Too Large",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted response to one chat-completions request; build it with the classmethods."""

    kind: ReplyKind
    content: str = ""
    chunks: int = 3
    delay: float = 0.0
    usage: tuple[int, int] = (10, 5)
    calls: tuple[tuple[str, str], ...] = ()
    chunk_size: int = 7
    status: int = 200
    retry_after: float | None = None
    seconds: float = 0.0
    after_chunks: int = 0
    reasoning: str = ""
    content_type: str = ""
    finish: str = ""
    # Set by the test: a streamed reply holds everything after its first delta until it is set.
    gate: threading.Event | None = None

    @classmethod
    def text(
        cls,
        content: str,
        *,
        chunks: int = 3,
        delay: float = 0.0,
        usage: tuple[int, int] = (10, 5),
        reasoning: str = "",
        finish: str = "stop",
        gate: threading.Event | None = None,
    ) -> Reply:
        """`content` streamed as `chunks` deltas, sleeping `delay` before each one.

        `reasoning` comes first, as one `reasoning_content` delta (as DeepSeek and others send it).
        `finish="length"` is an answer the output limit cut. With `gate`, the deltas after the
        first wait until the test sets it (what the client shows of an unfinished answer).
        """
        return cls(
            "text",
            content=content,
            chunks=chunks,
            delay=delay,
            usage=usage,
            reasoning=reasoning,
            finish=finish,
            gate=gate,
        )

    @classmethod
    def tool_calls(
        cls, *calls: tuple[str, str], text: str = "", chunk_size: int = 7, delay: float = 0.0
    ) -> Reply:
        """Calls of (name, arguments_json) sent verbatim, arguments split into small fragments."""
        return cls("tool_calls", content=text, calls=calls, chunk_size=chunk_size, delay=delay)

    @classmethod
    def error(
        cls, status: int, message: str = "error", *, retry_after: float | None = None
    ) -> Reply:
        """An HTTP error with an OpenAI-style JSON body (and a Retry-After header if given)."""
        return cls("error", content=message, status=status, retry_after=retry_after)

    @classmethod
    def hang(cls, seconds: float) -> Reply:
        """Accept the request, send nothing for `seconds`, then close the connection."""
        return cls("hang", seconds=seconds)

    @classmethod
    def cut(cls, content: str, *, chunks: int = 3) -> Reply:
        """Stream `content`, then end the response cleanly without a finish reason or [DONE].

        What a proxy shows when the model's connection was reset mid-answer; `content=""` is an
        empty stream.
        """
        return cls("cut", content=content, chunks=chunks)

    @classmethod
    def body(cls, content: str, *, content_type: str = "text/plain") -> Reply:
        """Answer a streaming request with a plain 200 body of `content_type`, not SSE."""
        return cls("body", content=content, content_type=content_type)

    @classmethod
    def completion(cls, content: str) -> Reply:
        """Answer a streaming request with a whole non-streaming JSON completion."""
        return cls("completion", content=content)

    @classmethod
    def drop(cls, content: str, *, after_chunks: int = 2) -> Reply:
        """Start streaming `content`, then cut the connection after `after_chunks` chunks."""
        return cls("drop", content=content, chunks=after_chunks + 1, after_chunks=after_chunks)


class ScriptedModelServer:
    """Serves scripted replies in FIFO order; `default` (or `responder`) when the script is empty.

    `abandoned` counts responses the client hung up on before they finished, so tests can see a
    cancelled request really reached the server's side of the socket.
    """

    def __init__(self, default: Reply | None = None) -> None:
        self.default = default or Reply.text("ok")
        self.responder: Callable[[dict], Reply] | None = None
        self.requests: list[dict] = []
        self.busy_seconds = 0.0
        self.abandoned = 0
        self.base_url = ""
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._call_ids = itertools.count(1)
        self._completion_ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._connections: set[_Connection] = set()

    # --- lifecycle ------------------------------------------------------------------------

    def start(self) -> ScriptedModelServer:
        ready: list[BaseException | int] = []
        started = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                self._server = loop.run_until_complete(
                    loop.create_server(lambda: _Connection(self), "127.0.0.1", 0)
                )
                ready.append(self._server.sockets[0].getsockname()[1])
            except BaseException as exc:
                ready.append(exc)
                started.set()
                loop.close()
                return
            started.set()
            loop.run_forever()
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=run, name="scripted-model", daemon=True)
        self._thread.start()
        started.wait()
        if isinstance(ready[0], BaseException):
            raise ready[0]
        self.base_url = f"http://127.0.0.1:{ready[0]}/v1"
        return self

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop = None
        self._thread = None

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        for connection in list(self._connections):
            connection.abort()
        tasks = [t for c in self._connections if (t := c.task) is not None]
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._server.wait_closed()

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- script ---------------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.abandoned = 0

    def take_requests(self) -> list[dict]:
        """The requests received since the last take, forgotten here: a run of thousands of
        turns checks them as it goes instead of holding every one."""
        with self._lock:
            taken = self.requests[:]
            self.requests.clear()
        return taken

    def wait_abandoned(self, count: int = 1, timeout: float = 10.0) -> bool:
        """Block until at least `count` responses were abandoned by the client."""
        with self._changed:
            return self._changed.wait_for(lambda: self.abandoned >= count, timeout)

    def _next_reply(self, body: dict) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(body)
        return self.default

    def _note_abandoned(self) -> None:
        with self._changed:
            self.abandoned += 1
            self._changed.notify_all()

    def _add_busy(self, seconds: float) -> None:
        with self._lock:
            self.busy_seconds += seconds

    def _new_call_id(self) -> str:
        return f"call_{next(self._call_ids)}"

    def _new_completion_id(self) -> str:
        return f"chatcmpl-{next(self._completion_ids)}"


class _Connection(asyncio.Protocol):
    """One keep-alive client connection: parses requests and runs one response task at a time."""

    def __init__(self, server: ScriptedModelServer) -> None:
        self.server = server
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.task: asyncio.Task[None] | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.server._connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.server._connections.discard(self)
        if self.task is not None and not self.task.done():
            self.task.cancel()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._maybe_start()

    def _maybe_start(self) -> None:
        if self.task is not None and not self.task.done():
            return
        request = _take_request(self.buffer)
        if request is not None:
            self.task = asyncio.get_running_loop().create_task(self._respond(*request))

    async def _respond(self, method: str, path: str, keep_alive: bool, body: bytes) -> None:
        writer = _Writer(self, keep_alive)
        try:
            if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
                writer.json(404, _error_body(404, f"no route for {method} {path}"))
            else:
                await self._chat(writer, body)
        except asyncio.CancelledError:
            self.server._note_abandoned()
            return
        except Exception as exc:  # a failing responder must fail the test's request, not hang it
            writer.json(500, _error_body(500, f"scripted server failed: {exc!r}"))
        if writer.must_close or not keep_alive:
            self.abort()
        else:
            self._maybe_start()

    async def _chat(self, writer: _Writer, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            writer.json(400, _error_body(400, "request body is not JSON"))
            return
        reply = self.server._next_reply(body)
        if reply.kind == "error":
            headers = {}
            if reply.retry_after is not None:
                headers["Retry-After"] = _format_seconds(reply.retry_after)
            writer.json(reply.status, _error_body(reply.status, reply.content), headers)
            return
        if reply.kind == "hang":
            await self._sleep(reply.seconds)
            writer.must_close = True
            return
        model = str(body.get("model", "scripted"))
        if reply.kind == "body":
            writer.raw(reply.content.encode(), reply.content_type)
            return
        if reply.kind == "completion" or not body.get("stream"):
            await self._sleep(reply.delay)
            writer.json(200, _completion_body(reply, model, self.server))
            return
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        writer.start_stream()
        events = _stream_chunks(reply, model, self.server, include_usage)
        if reply.kind == "drop":
            events = itertools.islice(events, reply.after_chunks)
        if reply.kind == "cut":
            events = itertools.islice(events, len(_split(reply.content, reply.chunks)))
            if not reply.content:
                events = iter(())
        for number, event in enumerate(events):
            await self._sleep(reply.delay)
            if number == 1 and reply.gate is not None:
                await asyncio.to_thread(reply.gate.wait, 120)
            writer.sse(event)
        if reply.kind == "drop":
            writer.must_close = True
        elif reply.kind == "cut":
            writer.end_chunks()
        else:
            writer.end_stream()

    async def _sleep(self, seconds: float) -> None:
        if seconds <= 0:
            return
        started = time.monotonic()
        try:
            await asyncio.sleep(seconds)
        finally:
            self.server._add_busy(time.monotonic() - started)


class _Writer:
    """Writes one HTTP response onto the connection's transport."""

    def __init__(self, connection: _Connection, keep_alive: bool) -> None:
        self.connection = connection
        self.keep_alive = keep_alive
        self.must_close = False

    def _write(self, data: bytes) -> None:
        transport = self.connection.transport
        if transport is not None and not self.connection.closed:
            transport.write(data)

    def _head(self, status: int, headers: dict[str, str]) -> bytes:
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        lines.append(f"Connection: {'keep-alive' if self.keep_alive else 'close'}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def json(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        head = {"Content-Type": "application/json", "Content-Length": str(len(data))}
        self._write(self._head(status, {**head, **(headers or {})}) + data)

    def raw(self, data: bytes, content_type: str) -> None:
        head = {"Content-Type": content_type, "Content-Length": str(len(data))}
        self._write(self._head(200, head) + data)

    def start_stream(self) -> None:
        head = {"Content-Type": "text/event-stream", "Transfer-Encoding": "chunked"}
        self._write(self._head(200, head))

    def sse(self, payload: dict[str, Any] | str) -> None:
        text = payload if isinstance(payload, str) else json.dumps(payload)
        data = f"data: {text}\n\n".encode()
        self._write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def end_stream(self) -> None:
        self.sse("[DONE]")
        self.end_chunks()

    def end_chunks(self) -> None:
        self._write(b"0\r\n\r\n")


def _take_request(buffer: bytearray) -> tuple[str, str, bool, bytes] | None:
    """Pop one complete request (method, path, keep_alive, body) off the buffer, if there is one."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = buffer[:end].decode("latin-1").split("\r\n")
    method, path, version = [*head[0].split(" "), "", ""][:3]
    headers = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    if len(buffer) < end + 4 + length:
        return None
    body = bytes(buffer[end + 4 : end + 4 + length])
    del buffer[: end + 4 + length]
    connection = headers.get("connection", "").lower()
    keep_alive = connection != "close" and (version == "HTTP/1.1" or connection == "keep-alive")
    return method, path, keep_alive, body


def _format_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else str(seconds)


def _error_body(status: int, message: str) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": str(status)}}


def _usage(reply: Reply) -> dict[str, int]:
    prompt, completion = reply.usage
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _split(text: str, pieces: int) -> list[str]:
    """`text` in up to `pieces` roughly equal, non-empty parts (one empty part for "")."""
    pieces = max(1, min(pieces, len(text)))
    size, extra = divmod(len(text), pieces)
    parts, start = [], 0
    for i in range(pieces):
        end = start + size + (1 if i < extra else 0)
        parts.append(text[start:end])
        start = end
    return parts


def _completion_body(reply: Reply, model: str, server: ScriptedModelServer) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    finish = reply.finish or "stop"
    if reply.kind == "tool_calls":
        message["tool_calls"] = [
            {
                "id": server._new_call_id(),
                "type": "function",
                "function": {"name": n, "arguments": a},
            }
            for n, a in reply.calls
        ]
        finish = "tool_calls"
    return {
        "id": server._new_completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _usage(reply),
    }


def _stream_chunks(
    reply: Reply, model: str, server: ScriptedModelServer, include_usage: bool
) -> Iterator[dict[str, Any]]:
    """The SSE chunk payloads of a streamed reply, in order (without the final [DONE])."""
    ident = server._new_completion_id()
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [choice],
        }

    text_parts = _split(reply.content, reply.chunks) if reply.kind != "tool_calls" else []
    if reply.kind == "tool_calls" and reply.content:
        text_parts = [reply.content]
    if reply.reasoning:
        yield chunk({"role": "assistant", "reasoning_content": reply.reasoning})
    for number, part in enumerate(text_parts or [""]):
        yield chunk({"role": "assistant", "content": part} if number == 0 else {"content": part})
    for index, (name, arguments) in enumerate(reply.calls):
        first = {"index": index, "id": server._new_call_id(), "type": "function"}
        yield chunk({"tool_calls": [{**first, "function": {"name": name, "arguments": ""}}]})
        step = max(1, reply.chunk_size)
        for start in range(0, len(arguments), step):
            piece = {"index": index, "function": {"arguments": arguments[start : start + step]}}
            yield chunk({"tool_calls": [piece]})
    yield chunk({}, "tool_calls" if reply.calls else reply.finish or "stop")
    if include_usage:
        yield {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": _usage(reply),
        }


def serve_until_stdin_closes(server: ScriptedModelServer) -> None:
    """Child-process side: print the base URL, serve until the parent closes our stdin."""
    with server:
        print(server.base_url, flush=True)
        sys.stdin.read()


@contextlib.contextmanager
def model_server_process(argv: list[str], cwd: Path | None = None) -> Iterator[str]:
    """Parent side: run `argv` (which calls `serve_until_stdin_closes`), yield its base URL.

    Benchmarks keep the model server in its own process so its CPU is not the measured one's.
    """
    child = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=cwd
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        yield child.stdout.readline().strip()
    finally:
        child.stdin.close()
        child.wait(30)
