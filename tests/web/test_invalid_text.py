"""Text that is not valid Unicode or JSON that Python refuses never breaks a turn or a connection.

Lone UTF-16 surrogates and integers with thousands of digits reach the daemon over the WebSocket
and REST; a model stream is cut off mid-answer. Every turn still ends with exactly one terminal
frame and is stored; malformed input gets an error frame or a 400 with a reason.
"""

from __future__ import annotations

from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon

HUGE = "9" * 5000
TERMINAL = ("done", "error", "cancelled")


def raw_message(content_json: str, client_id: str = "c1") -> str:
    """A message frame whose content is written as raw JSON text (escapes kept as sent)."""
    head = f'{{"type": "message", "session_id": null, "client_id": "{client_id}"'
    return f'{head}, "content": {content_json}}}'


def terminal(frames: list[dict]) -> list[dict]:
    return [f for f in frames if f["type"] in TERMINAL and f.get("session_id")]


async def finish(client, count: int = 1) -> list[dict]:
    """Read until `count` terminal frames arrived; return the terminal frames."""
    while len(terminal(client.frames)) < count:
        await client.recv()
    return terminal(client.frames)


async def test_a_lone_surrogate_in_a_message_is_repaired_and_the_turn_stored(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Got it."))
    client = await daemon.ws()
    await client.send(raw_message('"half an emoji: \\ud83d and a stray \\udc00"'))
    [done] = await finish(client)
    assert done["type"] == "done" and done["content"] == "Got it."
    records = await daemon.context.runtime.sessions.messages(done["session_id"])
    user = next(r for r in records if r["type"] == "user")
    assert user["content"] == "half an emoji: \ufffd and a stray \ufffd"
    assert "stray \ufffd" in str(model_server.requests[-1]["messages"][-1]["content"])
    await client.close()


async def test_an_emoji_split_by_the_model_stream_reaches_the_client_whole(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("ok \ud83d\ude00 fine", chunks=2))
    client = await daemon.ws()
    await client.send(raw_message('"hi"'))
    [done] = await finish(client)
    assert done["type"] == "done" and done["content"] == "ok \U0001f600 fine"
    assert "".join(f["content"] for f in client.of("stream")) == "ok \U0001f600 fine"
    await client.close()


async def test_huge_integers_in_a_frame_get_an_error_frame_and_the_connection_stays(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    client = await daemon.ws()
    await client.send(f'{{"type": "subscribe", "session_id": "x", "last_seq": {HUGE}}}')
    error = await client.until("error")
    assert error["session_id"] is None and "digits" in error["error"]
    await client.send({"type": "ping"})
    await client.until("pong")
    await client.close()


async def test_malformed_rest_bodies_get_400_with_a_reason(daemon: Daemon) -> None:
    headers = {"content-type": "application/json"}
    async with daemon.http() as http:
        for body, reason in (
            (f'{{"title": {HUGE}}}', "digits"),
            ("[" * 100_000, "nested too deeply"),
            (b'{"title": "\xff\xfe"}', "UTF-8"),
            ('{"title": "unfinished', "malformed JSON"),
        ):
            response = await http.post("/api/sessions", content=body, headers=headers)
            assert response.status_code == 400, (body[:40], response.text)
            assert reason in response.json()["error"]
        response = await http.post(
            "/api/sessions", content='{"title": "odd \\ud800 title"}', headers=headers
        )
        assert response.status_code == 201, response.text
        assert response.json()["title"] == "odd \ufffd title"


async def test_a_cut_off_answer_is_an_error_and_the_partial_text_is_kept(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    # First token already shown, so no retry: the user sees the error and the text so far.
    model_server.script(Reply.cut("The first half of an answ", chunks=2))
    client = await daemon.ws()
    await client.send(raw_message('"tell me"'))
    [ended] = await finish(client)
    assert ended["type"] == "error" and "cut off" in ended["error"]
    records = await daemon.context.runtime.sessions.messages(ended["session_id"])
    partial = next(r for r in records if r["type"] == "assistant")
    assert partial["text"] == "The first half of an answ" and partial["stop_reason"] == "error"
    assert any(r["type"] == "note" and "cut off" in r["text"] for r in records)
    await client.close()


async def test_a_message_to_a_named_new_session_creates_it(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": "my-notes", "content": "hi"})
    [done] = await finish(client)
    assert done["session_id"] == "my-notes" and done["type"] == "done"
    await client.send({"type": "subscribe", "session_id": "never-made", "last_seq": None})
    error = await client.until("error")
    assert "unknown session" in error["error"]
    await client.close()
