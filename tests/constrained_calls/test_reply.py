"""Constrained tool calls: the schema, the forgiving parser, and a whole turn through the loop
against the scripted OpenAI-compatible server (the model answers in JSON text only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from countbot.agent.events import ToolEnd, ToolStart, TurnDone
from countbot.agent.turn_request import TurnRequest
from countbot.constrained_calls.reply import CUT_OFF, AnswerStream, parse_reply, reply_schema
from countbot.llm.types import ToolSpec
from countbot.runtime.assembly import open_runtime
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings

TOOLS = (
    ToolSpec("list_dir", "List a directory.", {"type": "object", "properties": {"path": {}}}),
    ToolSpec("write_file", "Write a file. More words.", {"type": "object", "properties": {}}),
)


def test_the_schema_offers_each_tool_by_name_or_an_answer() -> None:
    options = reply_schema(TOOLS)["anyOf"]
    assert [o["properties"].get("tool", {}).get("enum") for o in options] == [
        ["list_dir"],
        ["write_file"],
        None,
    ]
    assert options[-1]["required"] == ["answer"]


@pytest.mark.parametrize(
    "text",
    [
        '{"tool": "list_dir", "arguments": {"path": "."}}',
        '```json\n{"tool": "list_dir", "arguments": {"path": "."}}\n```',
        'Sure! Here it is: {"tool": "list_dir", "arguments": {"path": "."},} hope that helps',
        '{"name": "list_dir", "arguments": "{\\"path\\": \\".\\"}"}',
        '[{"tool": "list_dir", "arguments": {"path": "."}}]',
    ],
)
def test_tool_calls_are_read_from_forgiving_json(text: str) -> None:
    assert parse_reply(text, TOOLS) == ("list_dir", {"path": "."})


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ('{"answer": "Paris."}', "Paris."),
        ("just words", "just words"),
        ('{"tool": "rm_rf", "arguments": {}}', '{"tool": "rm_rf", "arguments": {}}'),
        ('{"tool": "list_dir", "arguments": {"path": "a very long', CUT_OFF),
    ],
)
def test_anything_else_is_an_answer(text: str, answer: str) -> None:
    assert parse_reply(text, TOOLS) == (answer, None)


def test_the_answer_streams_out_of_its_json_string_piece_by_piece() -> None:
    stream = AnswerStream()
    pieces = [stream.feed(p) for p in ['{ "ans', 'wer": "Hi', ' \\"you\\"', "\\n\\u00e9", '!"}']]
    assert pieces == ["", "Hi", ' "you"', "\né", "!"]
    assert stream.emitted == 'Hi "you"\né!'


async def test_a_constrained_turn_runs_the_tool_and_answers(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    settings = make_settings(tmp_path, model_server)
    settings.model.tool_calls = "constrained"
    call = {"tool": "write_file", "arguments": {"path": "hi.txt", "content": "hi"}}
    model_server.script(
        Reply.text(f"```json\n{json.dumps(call)}\n```"),
        Reply.text('{"answer": "Wrote \\"hi.txt\\"."}', chunks=5),
    )
    runtime = await open_runtime(settings)
    try:
        request = TurnRequest("write hi into hi.txt", "s1")  # a file named: a writing request
        events = [e async for e in runtime.agent.process_message(request)]
    finally:
        await runtime.close()
    start = next(e for e in events if isinstance(e, ToolStart))
    end = next(e for e in events if isinstance(e, ToolEnd))
    done = events[-1]
    assert start.name == "write_file" and start.arguments == call["arguments"]
    assert end.status == "ok" and (settings.workspace / "hi.txt").read_text() == "hi"
    assert isinstance(done, TurnDone) and done.content == 'Wrote "hi.txt".'
    first, second = model_server.requests[0], model_server.requests[1]
    assert "tools" not in first and first["response_format"]["type"] == "json_schema"
    assert second["messages"][-2] == {"role": "assistant", "content": json.dumps(call)}
    assert second["messages"][-1]["role"] == "user"  # the result, as the model can read it
