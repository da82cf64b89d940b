"""A fake Anthropic Messages API on 127.0.0.1 that caches prompts as the real one does.

litellm's Anthropic client calls it (`POST /v1/messages`, streamed events). It answers with the
scripted `Reply`s of `scripted_model` (text or tool calls) and keeps a prompt cache by the
documented rules: a request's blocks run tools, system, messages; a prefix is written to the
cache only at a block marked `cache_control`; a mark reads the longest cached prefix ending at
most 20 blocks before it, and a prefix matches only if it is byte-identical (marks aside). Each
answer reports `input_tokens`, `cache_read_input_tokens` and `cache_creation_input_tokens` the
way the API does (a token is four characters of the block's JSON here).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.scripted_model import Reply

LOOKBACK = 20


def blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's cacheable blocks in the API's order: tools, system, each message's."""
    found: list[dict[str, Any]] = list(body.get("tools") or ())
    system = body.get("system") or []
    found += [{"type": "text", "text": system}] if isinstance(system, str) else list(system)
    for message in body.get("messages", []):
        content = message["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        found += [{"role": message["role"], **block} for block in content]
    return found


def unmarked(block: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in block.items() if key != "cache_control"}


def tokens(block: dict[str, Any]) -> int:
    return max(1, len(json.dumps(unmarked(block), sort_keys=True)) // 4)


class AnthropicServer:
    """Serves `/v1/messages`; `requests` keeps each body, `usages` each reported usage."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.usages: list[dict[str, int]] = []
        self.responder: Callable[[dict[str, Any]], Reply] = lambda body: Reply.text("ok")
        self._cache: set[str] = set()
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def __enter__(self) -> AnthropicServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join()

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.usages.clear()
            self._cache.clear()

    def answer(self, body: dict[str, Any]) -> tuple[Reply, dict[str, int]]:
        """The reply to `body` and its usage, the cache updated."""
        with self._lock:
            self.requests.append(body)
            usage = self._use_cache(blocks(body))
            self.usages.append(usage)
        return self.responder(body), usage

    def _use_cache(self, found: list[dict[str, Any]]) -> dict[str, int]:
        keys, sizes, digest, total = [], [], hashlib.sha256(), 0
        for block in found:
            digest.update(json.dumps(unmarked(block), sort_keys=True).encode())
            keys.append(digest.copy().hexdigest())
            total += tokens(block)
            sizes.append(total)
        marks = [i for i, block in enumerate(found) if "cache_control" in block]
        read = 0
        for mark in marks:
            hits = [i for i in range(max(mark - LOOKBACK, 0), mark + 1) if keys[i] in self._cache]
            read = max([read, *(sizes[i] for i in hits)])
        written = max(sizes[marks[-1]] - read, 0) if marks else 0
        self._cache.update(keys[i] for i in marks)
        return {
            "input_tokens": total - read - written,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
        }


def _handler(server: AnthropicServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            reply, usage = server.answer(body)
            serial = len(server.requests)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in _events(reply, usage, body.get("model", ""), serial):
                name = event["type"]
                self.wfile.write(f"event: {name}\ndata: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()

        def log_message(self, *args: object) -> None:
            pass

    return Handler


def _events(
    reply: Reply, usage: dict[str, int], model: str, serial: int
) -> Iterator[dict[str, Any]]:
    message = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1},
    }
    yield {"type": "message_start", "message": message}
    index = 0
    if reply.content:
        text = {"type": "text", "text": ""}
        yield {"type": "content_block_start", "index": 0, "content_block": text}
        delta = {"type": "text_delta", "text": reply.content}
        yield {"type": "content_block_delta", "index": 0, "delta": delta}
        yield {"type": "content_block_stop", "index": 0}
        index = 1
    for number, (name, arguments) in enumerate(reply.calls):
        start = {"type": "tool_use", "id": f"toolu_{serial}_{number}", "name": name, "input": {}}
        yield {"type": "content_block_start", "index": index, "content_block": start}
        delta = {"type": "input_json_delta", "partial_json": arguments}
        yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
        index += 1
    stop = "tool_use" if reply.calls else "end_turn"
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": max(len(reply.content) // 4, 1)},
    }
    yield {"type": "message_stop"}
