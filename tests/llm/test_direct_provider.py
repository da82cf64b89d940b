"""What only the direct provider reads itself: bodies other than a clean event stream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from countbot.llm.direct_provider import DirectProvider
from countbot.llm.provider_options import ProviderOptions
from countbot.llm.types import ChatRequest, StreamDone, StreamError, TextPart, UserMessage
from tests.llm.conftest import HeaderRecorder, _read_request

Serve = Callable[[bytes], Awaitable[str]]
HELLO = ChatRequest((UserMessage((TextPart("hi"),)),))
COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "whole answer",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a"}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 7, "completion_tokens": 3},
}


def http(body: bytes, content_type: str) -> bytes:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """Start a loopback server answering every request with the given raw response."""
    servers: list[asyncio.Server] = []

    async def start(response: bytes) -> str:
        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while await _read_request(reader):
                writer.write(response)
                await writer.drain()
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        servers.append(server)
        return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"

    yield start
    for server in servers:
        server.close()


async def answer(base_url: str) -> StreamDone | StreamError:
    provider = DirectProvider("openai/m", ProviderOptions(api_base=base_url, max_retries=0))
    events = [event async for event in provider.stream(HELLO)]
    await provider.aclose()
    last = events[-1]
    assert isinstance(last, StreamDone | StreamError)
    return last


async def test_a_server_that_ignores_stream_still_answers(serve: Serve) -> None:
    base = await serve(http(json.dumps(COMPLETION).encode(), "application/json"))

    done = await answer(base)

    assert isinstance(done, StreamDone)
    assert done.message.text == "whole answer"
    assert [c.arguments for c in done.message.tool_calls] == [{"path": "a"}]
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (7, 3)


async def test_an_error_event_mid_stream_ends_with_the_providers_words(serve: Serve) -> None:
    error_event = {"error": {"message": "model overloaded, try later", "type": "server_error"}}
    body = f"data: {json.dumps(error_event)}\n\n".encode()
    base = await serve(http(body, "text/event-stream"))

    error = await answer(base)

    assert isinstance(error, StreamError) and error.retryable
    assert error.message.endswith("model overloaded, try later")


def chunk(delta: dict[str, object], finish: str | None = None, **fields: object) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    payload = {"id": "c1", "object": "chat.completion.chunk", "choices": [choice], **fields}
    return json.dumps(payload)


async def test_events_in_any_framing_the_standard_allows_are_read(serve: Serve) -> None:
    # CRLF line ends, a comment, other fields, a byte-order mark, one event's data over two lines.
    first, rest = chunk({"content": "Hel"}).split(", ", 1)
    usage = json.dumps({"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 2}})
    body = (
        "\ufeff: keep-alive\r\n\r\n"
        f"event: message\r\nid: 1\r\ndata: {first},\r\ndata: {rest}\r\n\r\n"
        f"data:{chunk({'content': 'lo'}, 'stop')}\r\n\r\n"
        f"data: {usage}\r\n\r\ndata: [DONE]\r\n\r\n"
    )
    base = await serve(http(body.encode(), "text/event-stream"))

    done = await answer(base)

    assert isinstance(done, StreamDone)
    assert done.message.text == "Hello"
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (4, 2)


async def test_a_chunk_with_fields_of_other_types_is_read_all_the_same(serve: Serve) -> None:
    # Token counts as floats, a tool call's index as a string: not the typed fast path's types.
    call = {"index": "0", "id": "call_1", "function": {"name": "read_file", "arguments": "{}"}}
    usage = {"prompt_tokens": 7.0, "completion_tokens": 3.0}
    body = (
        f"data: {chunk({'content': 'ok', 'tool_calls': [call]}, 'tool_calls')}\n\n"
        f"data: {json.dumps({'choices': [], 'usage': usage})}\n\ndata: [DONE]\n\n"
    )
    base = await serve(http(body.encode(), "text/event-stream"))

    done = await answer(base)

    assert isinstance(done, StreamDone)
    assert done.message.text == "ok"
    assert [(c.name, c.arguments) for c in done.message.tool_calls] == [("read_file", {})]
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (7, 3)


@pytest.mark.parametrize(
    ("fallback", "key_env", "sent"),
    [("ollama/llama3", None, None), ("deepseek/chat", "DEEPSEEK_API_KEY", "Bearer sk-other")],
)
async def test_a_fallback_gets_its_own_key_never_the_primarys(
    serve: Serve,
    header_recorder: HeaderRecorder,
    monkeypatch: pytest.MonkeyPatch,
    fallback: str,
    key_env: str | None,
    sent: str | None,
) -> None:
    busy = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"
    monkeypatch.setenv("OPENAI_API_BASE", await serve(busy))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-primary")
    prefix = fallback.split("/")[0].upper()
    monkeypatch.setenv(f"{prefix}_API_BASE", header_recorder.base_url)
    if key_env:
        monkeypatch.setenv(key_env, "sk-other")
    provider = DirectProvider("openai/m", ProviderOptions(fallbacks=[fallback], max_retries=0))

    events = [event async for event in provider.stream(HELLO)]
    await provider.aclose()

    assert isinstance(events[-1], StreamDone)
    assert header_recorder.requests[-1].get("authorization") == sent
