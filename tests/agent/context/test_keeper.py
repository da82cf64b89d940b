"""A long session on a small window, end to end: every request fits, pairs hold, nothing is lost.

The scripted model plays the assistant: each turn it reads a 20 KB file and answers; it saves a
fact during the silent flush before a summary and finds it with `memory_search` in the last turn.
"""

from __future__ import annotations

import json
import re
from typing import Any

from countbot.agent.context.flush import FLUSH_INSTRUCTIONS
from countbot.agent.context.summary import SUMMARY_INSTRUCTIONS
from countbot.agent.context.tokens import request_budget
from countbot.agent.events import ToolEnd, TurnDone
from countbot.agent.turn_request import TurnRequest
from countbot.runtime.assembly import open_runtime
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings
from tests.support.wire_tokens import wire_tokens

WINDOW = 4096
FACT = "my locker code is 4417"


def system_of(body: dict[str, Any]) -> str:
    return body["messages"][0]["content"]


def assert_paired(messages: list[dict[str, Any]]) -> None:
    """Each call is answered right after its assistant message, and no result is orphaned."""
    pending: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            assert message["tool_call_id"] in pending, "a result without its call"
            pending.discard(message["tool_call_id"])
        else:
            assert not pending, "a call without its result"
            pending = {c["id"] for c in message.get("tool_calls") or ()}
    assert not pending


def play(body: dict[str, Any]) -> Reply:
    """The scripted assistant: reads the file, saves the fact when flushing, finds it later."""
    system = body["messages"][0]["content"]
    last = body["messages"][-1]
    if system == FLUSH_INSTRUCTIONS:
        if FACT in body["messages"][1]["content"]:
            return Reply.tool_calls(("memory_write", json.dumps({"note": f"User: {FACT}."})))
        return Reply.text("")
    if system == SUMMARY_INSTRUCTIONS:
        return Reply.text("- the user had the assistant read big.txt many times")
    if last["role"] == "tool":
        if "memory_search" in json.dumps(body["messages"][-2].get("tool_calls")):
            code = re.search(r"locker code is (\d+)", last["content"])
            return Reply.text(f"Your locker code is {code.group(1) if code else 'unknown'}.")
        return Reply.text("Read it.")
    text = json.dumps(last["content"])
    if "locker code?" in text:
        return Reply.tool_calls(("memory_search", json.dumps({"query": "locker code"})))
    return Reply.tool_calls(("read_file", json.dumps({"path": "big.txt"})))


async def test_two_hundred_turns_on_a_small_window(tmp_path, model_server: ScriptedModelServer):
    settings = make_settings(tmp_path, model_server, context_budget=0.95)
    settings.model.context_window = WINDOW
    settings.model.max_tokens = 128
    settings.memory.recall = False  # this is memory_search's test; auto-recall has its own
    model_server.responder = play
    runtime = await open_runtime(settings)
    try:
        workspace = settings.workspace
        lines = [f"line {i}: the quick brown fox jumps over the lazy dog" for i in range(400)]
        (workspace / "big.txt").write_text("\n".join(lines)[:20_000])
        answers = []
        for turn in range(1, 201):
            if turn % 50 == 0:  # the file changes now and then: the re-read says so
                (workspace / "big.txt").write_text(f"version {turn}\n" + "\n".join(lines)[:20_000])
            text = {3: f"Please remember: {FACT}.", 200: "What is my locker code?"}.get(
                turn, f"Turn {turn}: read big.txt again."
            )
            events = [e async for e in runtime.agent.process_message(TurnRequest(text, "s1"))]
            assert isinstance(events[-1], TurnDone), events[-1]
            answers.append((events[-1].content, [e for e in events if isinstance(e, ToolEnd)]))

        budget = request_budget(WINDOW, 0.95, 128)
        chats = [b for b in model_server.requests if system_of(b) != FLUSH_INSTRUCTIONS]
        assert len(model_server.requests) > 400
        for body in model_server.requests:
            assert wire_tokens(body) <= budget
            assert_paired(body["messages"])
        assert any("unchanged since the earlier read" in json.dumps(b) for b in chats)
        assert any("changed since the earlier read" in json.dumps(b) for b in chats)
        assert any("[Earlier result of read_file" in json.dumps(b) for b in chats)

        memory = (workspace / "MEMORY.md").read_text()
        markers = re.findall(r"<!-- countbot:summary session=s1 through=(\d+) -->", memory)
        assert len(markers) >= 2 and len(markers) == len(set(markers))
        summaries = [b for b in model_server.requests if system_of(b) == SUMMARY_INSTRUCTIONS]
        assert len(markers) == len(summaries)
        assert memory.count(FACT) == 1

        # Every model call is counted for budgets, the flush and the summaries included.
        assert (await runtime.usage.totals())["requests"] == len(model_server.requests)
        final, tools = answers[-1]
        assert [t.name for t in tools] == ["memory_search"] and FACT in tools[0].result
        assert final == "Your locker code is 4417."
    finally:
        await runtime.close()
