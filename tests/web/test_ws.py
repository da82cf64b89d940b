"""The WebSocket protocol against a real daemon: turns, queue modes, watchers, replay, bad input."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon, DaemonFactory


def contiguous(frames: list[dict]) -> bool:
    seqs = [f["seq"] for f in frames if "seq" in f]
    return seqs == list(range(seqs[0], seqs[0] + len(seqs)))


async def test_a_message_streams_its_answer_in_numbered_frames(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Streaming works fine.", chunks=4))
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": None, "content": "hi", "client_id": "m1"})
    done = await client.until("done")
    ack = client.frames[0]
    assert ack["type"] == "session" and ack["queued"] is False and ack["client_id"] == "m1"
    session_id = ack["session_id"]
    streams = client.of("stream")
    assert len(streams) >= 2 and "".join(f["content"] for f in streams) == done["content"]
    assert done["content"] == "Streaming works fine."
    assert done["usage"]["total_tokens"] > 0
    assert all(f["session_id"] == session_id for f in client.frames)
    assert contiguous(client.frames)
    await client.close()


async def test_tool_calls_show_as_start_and_result_frames(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    args = json.dumps({"path": "hello.txt", "content": "from the web"})
    model_server.script(Reply.tool_calls(("write_file", args)), Reply.text("Written."))
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": "tools", "content": "write it"})
    done = await client.until("done")
    start, result = client.of("tool_start")[0], client.of("tool_result")[0]
    assert start["name"] == "write_file"
    assert start["arguments"] == {"path": "hello.txt", "content": "from the web"}
    assert result["tool_call_id"] == start["tool_call_id"] and result["status"] == "ok"
    assert isinstance(result["duration_ms"], float | int)
    assert done["content"] == "Written."
    workspace = daemon.settings.workspace
    assert (workspace / "hello.txt").read_text(encoding="utf-8") == "from the web"
    await client.close()


async def test_cancel_stops_a_slow_answer(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("a long and slow answer", chunks=10, delay=1.0))
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": "slow", "content": "go"})
    await client.until("stream")
    await client.send({"type": "cancel", "session_id": "slow"})
    await client.until("cancelled")
    assert not client.of("done")
    await client.close()


async def test_followup_and_interrupt_over_the_socket(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    model_server.script(
        Reply.text("first, slowly", chunks=3, delay=0.3),
        Reply.text("second"),
        Reply.text("third, very slowly", chunks=10, delay=1.0),
        Reply.text("fourth"),
    )
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": "q", "content": "1"})
    await client.until("stream")
    await client.send({"type": "message", "session_id": "q", "content": "2", "mode": "followup"})
    await client.until("done", 2)
    assert [f["queued"] for f in client.of("session")] == [False, True]
    assert [f["content"] for f in client.of("done")] == ["first, slowly", "second"]
    await client.send({"type": "message", "session_id": "q", "content": "3"})
    await client.until("stream", len(client.of("stream")) + 1)
    await client.send({"type": "message", "session_id": "q", "content": "4", "mode": "interrupt"})
    await client.until("done", 3)
    ends = [f["type"] for f in client.frames if f["type"] in ("done", "cancelled", "error")]
    assert ends == ["done", "done", "cancelled", "done"]
    assert client.of("done")[-1]["content"] == "fourth"
    assert contiguous(client.frames)
    await client.close()


async def test_two_tabs_watching_a_session_see_the_same_stream(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("seen by both tabs", chunks=3))
    sender, other = await daemon.ws(), await daemon.ws()
    await daemon.context.runtime.sessions.ensure("shared")
    await other.send({"type": "subscribe", "session_id": "shared", "last_seq": None})
    await other.send({"type": "ping"})
    await other.until("pong")  # the subscription is in place
    await sender.send({"type": "message", "session_id": "shared", "content": "hello tabs"})
    await sender.until("done")
    await other.until("done")
    mine = sender.frames
    theirs = [f for f in other.frames if f["type"] != "pong"]
    assert theirs[0]["type"] == "user_message" and theirs[0]["content"] == "hello tabs"
    assert mine[0]["type"] == "session"
    assert [f["seq"] for f in theirs] == [f["seq"] for f in mine]
    assert theirs[1:] == mine[1:]
    await sender.close()
    await other.close()


async def test_a_reconnecting_client_gets_what_it_missed(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("one two three four five six", chunks=6, delay=0.2))
    first = await daemon.ws()
    await first.send({"type": "message", "session_id": "r", "content": "count"})
    seen = await first.until("stream")
    await first.close()
    watcher = await daemon.ws()  # waits for the end of the turn on another connection
    await watcher.send({"type": "subscribe", "session_id": "r", "last_seq": seen["seq"]})
    await watcher.until("done")
    again = await daemon.ws()
    await again.send({"type": "subscribe", "session_id": "r", "last_seq": seen["seq"]})
    done = await again.until("done")
    replayed = again.frames
    assert replayed[0]["seq"] == seen["seq"] + 1 and contiguous(replayed)
    text = seen["content"] + "".join(f["content"] for f in replayed if f["type"] == "stream")
    assert text == done["content"] == "one two three four five six"
    await watcher.close()
    await again.close()


@pytest.mark.parametrize("where", ["older than the buffer", "from before a restart"])
async def test_a_gap_that_cannot_be_replayed_asks_for_a_resync(
    daemon: Daemon, model_server: ScriptedModelServer, where: str
) -> None:
    model_server.script(Reply.text("kept in the buffer", chunks=2))
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": "g", "content": "hi"})
    done = await client.until("done")
    # A seq far below the session's first, or above its newest (the counter restarted).
    last_seq = 1 if where == "older than the buffer" else done["seq"] + 1000
    late = await daemon.ws()
    await late.send({"type": "subscribe", "session_id": "g", "last_seq": last_seq})
    assert (await late.until("resync")) == {"type": "resync", "session_id": "g"}
    # What is still buffered comes first, in order, then the resync; no error frame.
    replayed = late.frames[:-1]
    assert replayed[0]["type"] == "user_message" and replayed[0]["content"] == "hi"
    assert replayed[1:] == client.frames[1:] and replayed[-1] == done
    assert not late.of("error")
    await client.close()
    await late.close()


BAD_FRAMES = [
    ("{not json", "malformed JSON"),
    ("[1, 2]", "JSON object"),
    ({"content": "no type"}, "no 'type'"),
    ({"type": "run_tool", "name": "exec", "arguments": {"command": "ls"}}, "unknown frame type"),
    ({"type": "message", "session_id": None}, "'content'"),
    ({"type": "message", "session_id": 5, "content": "x"}, "'session_id'"),
    ({"type": "message", "session_id": None, "content": "   "}, "empty"),
    ({"type": "message", "session_id": None, "content": "x", "mode": "later"}, "'mode'"),
    ({"type": "message", "session_id": None, "content": "x", "media": "img"}, "'media'"),
    (
        {
            "type": "message",
            "session_id": None,
            "content": "x",
            "media": [{"type": "image", "media_type": "text/html", "data": "PGI+"}],
        },
        "media_type",
    ),
    ({"type": "cancel"}, "'session_id' is missing"),
    ({"type": "subscribe", "session_id": "x", "last_seq": "7"}, "'last_seq'"),
    ({"type": "subscribe", "session_id": "x", "last_seq": None, "replay_turn": 1}, "replay_turn"),
    ({"type": "subscribe", "session_id": "nobody-has-this", "last_seq": None}, "unknown session"),
    ({"type": "unsubscribe", "session_id": ""}, "'session_id'"),
    (b"\x00\x01binary", "binary"),
]


@pytest.mark.parametrize(("frame", "problem"), BAD_FRAMES)
async def test_bad_frames_get_an_error_frame_and_the_connection_stays_open(
    daemon: Daemon, frame: object, problem: str
) -> None:
    client = await daemon.ws()
    await client.send(frame)  # type: ignore[arg-type]
    error = await client.recv()
    assert error["type"] == "error" and error["session_id"] is None
    assert problem in error["error"] and error["retryable"] is False
    await client.send({"type": "ping"})
    assert (await client.recv()) == {"type": "pong"}
    await client.close()


async def test_a_refused_message_echoes_its_client_id(daemon: Daemon) -> None:
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": None, "content": 3, "client_id": "k9"})
    error = await client.recv()
    assert error["type"] == "error" and error["client_id"] == "k9"
    await client.close()


async def test_an_oversized_frame_is_refused_with_its_size(start_daemon: DaemonFactory) -> None:
    async with start_daemon(max_frame_bytes=4096) as daemon:
        client = await daemon.ws()
        big = json.dumps({"type": "message", "session_id": None, "content": "x" * 5000})
        await client.send(big)
        error = await client.recv()
        assert error["type"] == "error"
        assert f"{len(big)} bytes" in error["error"] and "4096" in error["error"]
        await client.send({"type": "ping"})
        assert (await client.recv()) == {"type": "pong"}
        await client.close()


async def test_many_bad_frames_do_not_hurt_other_clients(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    noisy, good = await daemon.ws(), await daemon.ws()
    for _ in range(50):
        await noisy.send("{{{")
    await good.send({"type": "message", "session_id": None, "content": "still there?"})
    done = await good.until("done")
    assert done["content"] == "ok"
    assert len([await noisy.recv() for _ in range(50)]) == 50
    await asyncio.gather(noisy.close(), good.close())


async def test_a_spent_budget_answers_with_the_notice_over_the_socket(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    daemon.settings.budget.session_tokens = 6_000
    reply = Reply("text", content="fine", usage=(5_000, 0))
    model_server.responder = lambda body: reply
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": "budget", "content": "one"})
    assert (await client.until("done"))["content"] == "fine"
    client.frames.clear()
    await client.send({"type": "message", "session_id": "budget", "content": "two"})
    done = await client.until("done")
    assert (
        done["content"].startswith("Budget reached") and "budget.session_tokens" in done["content"]
    )
    assert len(model_server.requests) == 1
    await client.close()


async def test_a_message_says_which_of_the_daemons_surfaces_sent_it(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    """`countbot chat` through the daemon sends `via: cli`: the model hears "channel cli" as it
    does without a daemon, not "channel web"; no client may claim a chat platform."""
    model_server.script(Reply.text("From the terminal."), Reply.text("From the page."))
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": "t", "content": "hi", "via": "cli"})
    await client.until("done")
    await client.send({"type": "message", "session_id": "w", "content": "hi"})
    await client.until("done", 2)
    said = [json.dumps(request["messages"][-1]) for request in model_server.requests]
    assert "channel cli" in said[0] and "channel web" in said[1]
    await client.send({"type": "message", "session_id": "t", "content": "x", "via": "telegram"})
    refused = await client.until("error")
    assert "'via' must be one of web, cli" in refused["error"]
    await client.close()
