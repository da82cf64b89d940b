"""End-to-end turns through the real runtime: litellm → scripted server, real tools, SQLite."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from countbot.agent.cancel import CancelToken
from countbot.agent.events import (
    AgentEvent,
    TextChunk,
    ToolEnd,
    ToolStart,
    TurnCancelled,
    TurnDone,
    TurnError,
    TurnNotice,
)
from countbot.agent.history import from_record
from countbot.agent.turn_request import TurnRequest
from countbot.common.authorship import Said
from countbot.runtime.assembly import Runtime, open_runtime
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings


async def collect(
    runtime: Runtime, text: str, session: str = "s1", **kw: object
) -> list[AgentEvent]:
    return [e async for e in runtime.agent.process_message(TurnRequest(text, session, **kw))]  # type: ignore[arg-type]


async def stored(runtime: Runtime, session: str = "s1") -> list[dict]:
    return await runtime.sessions.messages(session, limit=500)


def assert_every_call_answered(records: list[dict]) -> None:
    calls = {c["id"] for r in records if r["type"] == "assistant" for c in r["tool_calls"]}
    answered = {r["tool_call_id"] for r in records if r["type"] == "tool_result"}
    assert calls == answered


async def test_plain_answer_streams_and_is_stored(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Hello there, friend!", chunks=4))
    events = await collect(runtime, "hi")
    chunks = [e.content for e in events if isinstance(e, TextChunk)]
    assert len(chunks) >= 2 and "".join(chunks) == "Hello there, friend!"
    assert isinstance(events[-1], TurnDone) and events[-1].content == "Hello there, friend!"
    assert events[-1].usage.total_tokens > 0
    records = await stored(runtime)
    assert [r["type"] for r in records] == ["user", "assistant"]
    assert records[1]["model"] and records[1]["provider"] == "openai"
    request = model_server.requests[0]
    assert request["messages"][0]["role"] == "system"
    assert "hi" in json.dumps(request["messages"][-1])
    assert {t["function"]["name"] for t in request["tools"]} >= {"read_file", "write_file", "exec"}


async def test_tool_turn_writes_a_file_and_answers(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    args = json.dumps({"path": "notes/todo.txt", "content": "buy milk"})
    model_server.script(
        Reply.tool_calls(("write_file", args), chunk_size=5), Reply.text("Saved it.")
    )
    events = await collect(runtime, "note: buy milk")
    assert isinstance(events[-1], TurnDone) and events[-1].content == "Saved it."
    start = next(e for e in events if isinstance(e, ToolStart))
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert start.name == "write_file" and start.arguments == {
        "path": "notes/todo.txt",
        "content": "buy milk",
    }
    assert end.status == "ok"
    assert (runtime.settings.workspace / "notes" / "todo.txt").read_text() == "buy milk"
    second = model_server.requests[1]["messages"]
    assert (
        second[-1]["role"] == "tool"
        and second[-2]["tool_calls"][0]["function"]["name"] == "write_file"
    )
    records = await stored(runtime)
    assert [r["type"] for r in records] == ["user", "assistant", "tool_result", "assistant"]
    audited = await runtime.tool_calls.query(session_id="s1")
    assert audited[0]["name"] == "write_file" and audited[0]["user_message"] == "note: buy milk"


async def test_several_tool_calls_answer_in_order(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    ws = runtime.settings.workspace
    (ws / "a.txt").write_text("alpha")
    (ws / "b.txt").write_text("beta")
    model_server.script(
        Reply.tool_calls(("read_file", '{"path": "a.txt"}'), ("read_file", '{"path": "b.txt"}')),
        Reply.text("done"),
    )
    events = await collect(runtime, "read both")
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert [e.status for e in ends] == ["ok", "ok"]
    assert "alpha" in ends[0].result and "beta" in ends[1].result
    tool_msgs = [m for m in model_server.requests[1]["messages"] if m["role"] == "tool"]
    assert "alpha" in tool_msgs[0]["content"] and "beta" in tool_msgs[1]["content"]


async def test_broken_tool_json_is_reported_to_the_model(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    model_server.script(
        Reply.tool_calls(("write_file", '{"path": "x.txt", "content": ')), Reply.text("sorry")
    )
    events = await collect(runtime, "write")
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.status == "error" and "JSON" in end.result
    assert not (runtime.settings.workspace / "x.txt").exists()
    assert isinstance(events[-1], TurnDone)


async def test_cancel_mid_stream_aborts_the_request(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("word " * 200, chunks=200, delay=0.05))
    token = CancelToken()
    events: list[AgentEvent] = []
    async for event in runtime.agent.process_message(
        TurnRequest("tell me a story", "s1", cancel_token=token)
    ):
        events.append(event)
        if isinstance(event, TextChunk) and len(events) == 2:
            token.cancel()
    assert isinstance(events[-1], TurnCancelled)
    assert sum(isinstance(e, TextChunk) for e in events) < 20
    assert await asyncio.to_thread(model_server.wait_abandoned, 1, 5.0)
    records = await stored(runtime)
    assert [r["type"] for r in records] == ["user", "assistant", "note"]
    assert records[1]["stop_reason"] == "cancelled" and records[1]["text"].startswith("word")


async def test_cancel_mid_tool_kills_the_command(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    marker = runtime.settings.workspace / "finished"
    command = json.dumps({"command": f"sleep 20 && touch {marker.name}"})
    model_server.script(Reply.tool_calls(("exec", command), ("list_dir", '{"path": "."}')))
    token = CancelToken()
    events: list[AgentEvent] = []
    async for event in runtime.agent.process_message(
        TurnRequest("run it", "s1", cancel_token=token)
    ):
        events.append(event)
        if isinstance(event, ToolStart):
            asyncio.get_running_loop().call_later(0.3, token.cancel)
    assert isinstance(events[-1], TurnCancelled)
    assert [e.status for e in events if isinstance(e, ToolEnd)] == ["cancelled"]
    records = await stored(runtime)
    assert_every_call_answered(records)
    assert {r["status"] for r in records if r["type"] == "tool_result"} == {"cancelled"}
    await asyncio.sleep(0.5)
    assert not marker.exists()
    assert len(model_server.requests) == 1


async def test_the_step_limit_notice_comes_after_what_the_model_wrote(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    paths = iter(range(100))
    model_server.responder = lambda body: Reply.tool_calls(
        ("list_dir", json.dumps({"path": f"d{next(paths)}"})), text="Looking."
    )
    runtime = await open_runtime(make_settings(tmp_path, model_server, max_iterations=3))
    try:
        events = await collect(runtime, "loop forever")
        records = await stored(runtime)
    finally:
        await runtime.close()
    notice, done = events[-2:]
    assert isinstance(notice, TurnNotice) and notice.code == "step_limit"
    assert "stopped after 3 steps" in notice.text
    # The answer is what the model wrote, not replaced by the notice.
    assert isinstance(done, TurnDone) and done.content == "Looking.\n\nLooking.\n\nLooking."
    assert len(model_server.requests) == 3
    assert sum(isinstance(e, ToolStart) for e in events) == 3
    assert records[-1]["type"] == "note" and records[-1]["code"] == "step_limit"


async def test_server_error_ends_the_turn_and_keeps_the_message(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    runtime.settings.model.max_retries = 1
    model_server.script(
        Reply.error(500, "boom"), Reply.error(500, "boom"), Reply.error(500, "boom")
    )
    events = await collect(runtime, "are you there?")
    assert isinstance(events[-1], TurnError) and events[-1].retryable
    records = await stored(runtime)
    assert records[0]["content"] == "are you there?" and records[-1]["type"] == "note"
    model_server.script(Reply.text("yes"))
    events = await collect(runtime, "again?")
    assert isinstance(events[-1], TurnDone)
    assert "are you there?" in json.dumps(model_server.requests[-1]["messages"])


async def test_steering_skips_unstarted_tools(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    class Inbox:
        def __init__(self) -> None:
            self.items: list[str] = []

        def pending(self) -> bool:
            return bool(self.items)

        def drain(self) -> list[Said]:
            items, self.items = self.items, []
            return [Said(item) for item in items]

    inbox = Inbox()

    def respond(body: dict) -> Reply:
        if len(model_server.requests) == 1:  # the user speaks while the model is answering
            inbox.items.append("actually, stop and say hi")
            return Reply.tool_calls(("list_dir", '{"path": "."}'))
        return Reply.text("hi")

    model_server.responder = respond
    events = await collect(runtime, "list files", steering=inbox)
    assert not [e for e in events if isinstance(e, ToolStart)]
    assert isinstance(events[-1], TurnDone)
    last_request = json.dumps(model_server.requests[-1]["messages"])
    assert "Skipped" in last_request and "actually, stop and say hi" in last_request


async def test_session_switches_model_and_replays(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.tool_calls(("list_dir", '{"path": "."}')), Reply.text("first"))
    await collect(runtime, "one")
    runtime.settings.model.name = "openai/other-model"
    model_server.script(Reply.text("second"))
    events = await collect(runtime, "two")
    assert isinstance(events[-1], TurnDone)
    assert model_server.requests[-1]["model"] == "other-model"
    records = await stored(runtime)
    models = [r["model"] for r in records if r["type"] == "assistant"]
    assert models[0] != models[-1]
    assert [from_record(r).type for r in records][-1] == "assistant"


async def test_tool_call_total_is_bounded_too(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    paths = iter(range(100))
    model_server.responder = lambda body: Reply.tool_calls(
        *[("list_dir", json.dumps({"path": f"d{next(paths)}"})) for _ in range(4)]
    )
    runtime = await open_runtime(make_settings(tmp_path, model_server, max_iterations=6))
    for number in range(8):
        (runtime.settings.workspace / f"d{number}").mkdir()
    try:
        events = await collect(runtime, "list a lot")
        records = await stored(runtime)
    finally:
        await runtime.close()
    assert sum(isinstance(e, ToolStart) for e in events) == 6
    assert len(model_server.requests) == 2
    notice = events[-2]
    assert isinstance(notice, TurnNotice) and "stopped after" in notice.text
    assert isinstance(events[-1], TurnDone)
    assert_every_call_answered(records)
    statuses = [r["status"] for r in records if r["type"] == "tool_result"]
    assert statuses.count("skipped") == 2
