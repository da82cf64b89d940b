"""Overflow summarization lands in MEMORY.md exactly once and never splits a tool call."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from countbot.agent.context.summary import OverflowSummarizer
from countbot.agent.events import TurnDone
from countbot.agent.turn_request import TurnRequest
from countbot.runtime.assembly import Runtime, open_runtime
from countbot.runtime.models import SettingsModelResolver
from countbot.store.sessions import SessionStore
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings

RANGE = re.compile(r"messages (\d+)–(\d+)")


def summarizing_responder(body: dict[str, Any]) -> Reply:
    system = body["messages"][0]["content"]
    if isinstance(system, str) and "Summarize the conversation excerpt" in system:
        return Reply.text("- The user likes green tea.")
    return Reply.text("noted")


@pytest.fixture
async def small_runtime(tmp_path: Path, model_server: ScriptedModelServer) -> Runtime:
    model_server.responder = summarizing_responder
    runtime = await open_runtime(make_settings(tmp_path, model_server, max_history=6))
    yield runtime  # type: ignore[misc]
    await runtime.close()


async def turn(runtime: Runtime, text: str) -> None:
    events = [e async for e in runtime.agent.process_message(TurnRequest(text, "s1"))]
    assert isinstance(events[-1], TurnDone)


async def test_overflow_is_summarized_once_each(
    small_runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    for i in range(12):
        await turn(small_runtime, f"message {i}")
    memory = (small_runtime.settings.workspace / "MEMORY.md").read_text()
    ranges = [(int(a), int(b)) for a, b in RANGE.findall(memory)]
    assert len(ranges) >= 2
    covered = [i for a, b in ranges for i in range(a, b + 1)]
    assert len(covered) == len(set(covered)), "a message was summarized twice"
    assert covered == list(range(covered[0], covered[-1] + 1)), "summaries left a gap"
    assert memory.count("The user likes green tea.") == len(ranges)
    last_chat_request = [
        r
        for r in model_server.requests
        if "Summarize the conversation excerpt" not in json.dumps(r["messages"][0])
    ][-1]
    text = json.dumps(last_chat_request["messages"])
    assert "Summary of earlier conversation" in text
    assert "message 0" not in text and "message 11" in text
    window = await small_runtime.sessions.load_window("s1", 100)
    assert len(window.records) <= 7


async def test_tool_call_and_result_stay_together(
    small_runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    for i in range(6):
        model_server.script(
            Reply.tool_calls(("list_dir", '{"path": "."}')), Reply.text(f"listed {i}")
        )
        await turn(small_runtime, f"list {i}")
    for request in model_server.requests:
        messages = request["messages"]
        called = {c["id"] for m in messages if m.get("tool_calls") for c in m["tool_calls"]}
        answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
        assert called == answered


class CrashAfterMemory(SessionStore):
    """Dies between writing MEMORY.md and marking the session, as a killed process would."""

    crashed = False

    async def mark_summarized(self, session_id: str, through_id: int, summary: str) -> None:
        if not self.crashed:
            self.crashed = True
            raise RuntimeError("killed")
        await super().mark_summarized(session_id, through_id, summary)


async def test_crash_between_memory_and_mark_does_not_duplicate(
    small_runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    for i in range(4):
        await turn(small_runtime, f"message {i}")
    await small_runtime.sessions.append("s1", {"type": "user", "content": "extra", "ts": 0})
    store = CrashAfterMemory(small_runtime.db)
    summarizer = OverflowSummarizer(store, small_runtime.memory, 6)
    settings = small_runtime.settings
    provider = (await SettingsModelResolver(lambda: settings.model, settings.data_dir)()).provider
    with pytest.raises(RuntimeError):
        await summarizer.summarize("s1", provider, None)
    assert await summarizer.summarize("s1", provider, None) is not None
    memory = (small_runtime.settings.workspace / "MEMORY.md").read_text()
    assert len(RANGE.findall(memory)) == 1
