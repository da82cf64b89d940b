"""Housekeeping on the utility model: summaries and the memory flush call `model.utility`, the
turn's answers the main model, and each call is counted in usage under its purpose."""

from __future__ import annotations

import json
from typing import Any

from countbot.agent.context.flush import FLUSH_INSTRUCTIONS
from countbot.agent.context.summary import SUMMARY_INSTRUCTIONS
from countbot.agent.events import TurnDone
from countbot.agent.turn_request import TurnRequest
from countbot.runtime.assembly import open_runtime
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings

HOUSEKEEPING = (FLUSH_INSTRUCTIONS, SUMMARY_INSTRUCTIONS)


def play(body: dict[str, Any]) -> Reply:
    system = body["messages"][0]["content"]
    if system == FLUSH_INSTRUCTIONS:
        return Reply.tool_calls(("memory_write", json.dumps({"note": "User likes figs."})))
    if system == SUMMARY_INSTRUCTIONS:
        return Reply.text("- the assistant read big.txt several times")
    if body["messages"][-1]["role"] == "tool":
        return Reply.text("Read it.")
    return Reply.tool_calls(("read_file", json.dumps({"path": "big.txt"})))


async def test_summary_and_flush_use_the_utility_model_and_answers_do_not(
    tmp_path, model_server: ScriptedModelServer
) -> None:
    settings = make_settings(tmp_path, model_server, context_budget=0.95)
    settings.model.context_window = 4096
    settings.model.max_tokens = 128
    settings.model.utility = "openai/utility-model"
    settings.memory.recall = False
    model_server.responder = play
    runtime = await open_runtime(settings)
    try:
        lines = [f"line {i}: the quick brown fox jumps over the lazy dog" for i in range(200)]
        (settings.workspace / "big.txt").write_text("\n".join(lines))
        for turn in range(12):
            request = TurnRequest(f"Turn {turn}: read big.txt again.", "s1")
            events = [e async for e in runtime.agent.process_message(request)]
            assert isinstance(events[-1], TurnDone), events[-1]
        purposes = {row["purpose"]: row for row in await runtime.usage.by_purpose()}
    finally:
        await runtime.close()
    requests = model_server.requests
    housekeeping = [b for b in requests if b["messages"][0]["content"] in HOUSEKEEPING]
    answers = [b for b in requests if b["messages"][0]["content"] not in HOUSEKEEPING]
    systems = {b["messages"][0]["content"] for b in housekeeping}
    assert systems == set(HOUSEKEEPING)  # both ran
    assert {b["model"] for b in housekeeping} == {"utility-model"}
    assert {b["model"] for b in answers} == {"test-model"}
    assert "User likes figs." in (settings.workspace / "MEMORY.md").read_text()
    flushes = sum(1 for b in housekeeping if b["messages"][0]["content"] == FLUSH_INSTRUCTIONS)
    assert purposes["memory_flush"]["requests"] == flushes
    assert purposes["summary"]["requests"] == len(housekeeping) - flushes
    assert purposes["answer"]["requests"] == len(answers)
