"""The scripted model server answers like an OpenAI endpoint, for httpx and for real litellm."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.scripted_model import Reply, ScriptedModelServer


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as running:
        yield running


def _post(server: ScriptedModelServer, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=10)


def _sse_payloads(text: str) -> list[Any]:
    payloads = []
    for line in text.splitlines():
        if line.startswith("data: "):
            data = line.removeprefix("data: ")
            payloads.append(data if data == "[DONE]" else json.loads(data))
    return payloads


def _load_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    import litellm

    return litellm


def test_default_reply_is_ok_with_usage_when_not_streaming(server: ScriptedModelServer) -> None:
    response = _post(server, {"model": "m", "messages": [{"role": "user", "content": "hi"}]})

    assert response.status_code == 200
    body = response.json()
    assert body["choices"][0]["message"]["content"] == "ok"
    assert body["usage"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    assert server.requests == [{"model": "m", "messages": [{"role": "user", "content": "hi"}]}]


def test_streamed_text_arrives_in_chunks_with_usage_when_asked(server: ScriptedModelServer) -> None:
    server.script(Reply.text("abcdefghi", chunks=3, usage=(7, 3)))
    body = {"model": "m", "messages": [], "stream": True, "stream_options": {"include_usage": True}}

    payloads = _sse_payloads(_post(server, body).text)

    deltas = [p["choices"][0]["delta"].get("content") for p in payloads[:3]]
    assert deltas == ["abc", "def", "ghi"]
    assert payloads[3]["choices"][0]["finish_reason"] == "stop"
    assert payloads[4]["usage"]["prompt_tokens"] == 7
    assert payloads[-1] == "[DONE]"


def test_streamed_text_has_no_usage_chunk_unless_asked(server: ScriptedModelServer) -> None:
    payloads = _sse_payloads(_post(server, {"model": "m", "stream": True}).text)

    assert not any(isinstance(p, dict) and "usage" in p for p in payloads)


def test_replies_come_in_script_order_then_responder_then_default(
    server: ScriptedModelServer,
) -> None:
    server.script(Reply.text("one"), Reply.text("two"))
    contents = [_post(server, {"n": i}).json()["choices"][0]["message"]["content"] for i in (1, 2)]
    server.responder = lambda body: Reply.text(f"echo {body['n']}")
    contents.append(_post(server, {"n": 3}).json()["choices"][0]["message"]["content"])
    server.responder = None
    contents.append(_post(server, {"n": 4}).json()["choices"][0]["message"]["content"])

    assert contents == ["one", "two", "echo 3", "ok"]
    assert [r["n"] for r in server.requests] == [1, 2, 3, 4]


def test_failing_responder_answers_500(server: ScriptedModelServer) -> None:
    server.responder = lambda body: body["missing"]

    response = _post(server, {})

    assert response.status_code == 500
    assert "KeyError" in response.json()["error"]["message"]


def test_reset_clears_script_and_requests(server: ScriptedModelServer) -> None:
    server.script(Reply.text("queued"))
    _post(server, {"n": 1})
    server.script(Reply.text("left over"))

    server.reset()

    assert server.requests == []
    assert _post(server, {}).json()["choices"][0]["message"]["content"] == "ok"


def test_error_has_openai_body_and_retry_after(server: ScriptedModelServer) -> None:
    server.script(Reply.error(429, "slow down", retry_after=2))

    response = _post(server, {"model": "m"})

    assert response.status_code == 429
    assert response.headers["retry-after"] == "2"
    assert response.json()["error"]["message"] == "slow down"


def test_keep_alive_serves_many_requests_on_one_connection(server: ScriptedModelServer) -> None:
    with httpx.Client(timeout=10) as client:
        for _ in range(5):
            response = client.post(f"{server.base_url}/chat/completions", json={"stream": True})
            assert _sse_payloads(response.text)[-1] == "[DONE]"
        assert response.http_version == "HTTP/1.1"
    assert len(server.requests) == 5


def test_unknown_path_is_404(server: ScriptedModelServer) -> None:
    assert httpx.get(f"{server.base_url}/models", timeout=10).status_code == 404


def test_hang_sends_nothing_then_closes_and_counts_busy_time(server: ScriptedModelServer) -> None:
    server.script(Reply.hang(0.2))

    with pytest.raises(httpx.RemoteProtocolError):
        _post(server, {"model": "m"})

    assert server.busy_seconds >= 0.2


def test_drop_cuts_the_stream_without_done(server: ScriptedModelServer) -> None:
    server.script(Reply.drop("abcdefgh", after_chunks=2))
    received: list[str] = []

    with (
        pytest.raises(httpx.RemoteProtocolError),
        httpx.stream("POST", f"{server.base_url}/chat/completions", json={"stream": True}) as r,
    ):
        for line in r.iter_lines():
            received.append(line)

    assert "data: [DONE]" not in received
    assert sum(line.startswith("data: ") for line in received) == 2


def test_client_hanging_up_mid_response_is_counted_as_abandoned(
    server: ScriptedModelServer,
) -> None:
    server.script(Reply.hang(30))
    host, port = server.base_url.removeprefix("http://").split("/")[0].split(":")
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"

    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(request)
        while not server.requests:  # the server has read the request and is now hanging
            time.sleep(0.01)

    assert server.wait_abandoned(1)


async def test_litellm_streams_text_and_usage(server: ScriptedModelServer) -> None:
    litellm = _load_litellm()
    server.script(Reply.text("Hello there", chunks=2))

    stream = await litellm.acompletion(
        model="openai/test-model",
        api_base=server.base_url,
        api_key="sk-test",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    text, usage = "", None
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        usage = getattr(chunk, "usage", None) or usage

    assert text == "Hello there"
    assert usage is not None and usage.prompt_tokens == 10
    assert server.requests[0]["model"] == "test-model"


async def test_litellm_receives_several_tool_calls_by_index(server: ScriptedModelServer) -> None:
    litellm = _load_litellm()
    server.script(Reply.tool_calls(("read", '{"path": "a.txt"}'), ("ls", "{}"), chunk_size=3))

    stream = await litellm.acompletion(
        model="openai/test-model",
        api_base=server.base_url,
        api_key="sk-test",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
    )
    calls: dict[int, dict[str, str]] = {}
    async for chunk in stream:
        for fragment in (chunk.choices[0].delta.tool_calls if chunk.choices else None) or ():
            call = calls.setdefault(fragment.index, {"id": "", "name": "", "args": ""})
            call["id"] = fragment.id or call["id"]
            call["name"] = fragment.function.name or call["name"]
            call["args"] += fragment.function.arguments or ""

    assert calls == {
        0: {"id": "call_1", "name": "read", "args": '{"path": "a.txt"}'},
        1: {"id": "call_2", "name": "ls", "args": "{}"},
    }
