"""Subagents obey the assistant's budgets: a real daemon, the scripted model reporting big usage."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from tests.subagents.script import Conversations, spawn, subagent_daemon
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import WsClient

WAIT = 20.0
LIMIT = 20_000
# What the subagent's first model call reports using: far past every limit below.
BIG = 50_000


def _dones(client: WsClient) -> list[str]:
    return [f["content"] for f in client.of("done")]


async def _until_two_answers(client: WsClient) -> None:
    """The spawning turn's answer, then the turn that relays (or is refused) the report."""
    async with asyncio.timeout(WAIT):
        while len(_dones(client)) < 2:
            await client.recv()


@pytest.mark.parametrize("limit", ["daily_tokens", "session_tokens", "turn_tokens"])
async def test_a_subagent_stops_at_the_budget_and_spends_the_parents(
    tmp_path: Path, model_server: ScriptedModelServer, limit: str
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("List the files", "scan")), Reply.text("On it.")])
    look = Reply.tool_calls(("list_dir", json.dumps({"path": "."})))
    conv.subagent("scan", dataclasses.replace(look, usage=(BIG, 0)), Reply.text("Two files."))
    model_server.responder = conv

    def tune(settings: Any) -> None:
        setattr(settings.budget, limit, LIMIT)

    async with subagent_daemon(tmp_path, model_server, tune=tune) as daemon:
        client = await daemon.ws()
        await client.send({"type": "message", "session_id": "s1", "content": "List my files"})
        await _until_two_answers(client)
        # It stopped before the model call that would have gone past the limit.
        assert len(conv.of("scan")) == 1
        async with daemon.http() as http:
            (record,) = (await http.get("/api/subagents?session=s1")).json()["subagents"]
        assert record["status"] == "done"
        assert (
            record["result"].startswith("Budget reached") and f"budget.{limit}" in record["result"]
        )
        # What it spent counts in the conversation that spawned it...
        today = await daemon.context.runtime.usage.today("s1")
        assert today["session_tokens"] >= BIG
        report_turn = _dones(client)[1]
        if limit == "turn_tokens":  # ...which may go on: the limit is per request
            assert report_turn == "Relayed: scan"
        else:  # ...which is over its budget now too
            assert report_turn.startswith("Budget reached") and f"budget.{limit}" in report_turn
        await client.close()


async def test_a_subagents_subagent_spends_the_root_conversations_budget(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Plan the trip", "plan")), Reply.text("Planning.")])
    conv.subagent("plan", Reply.tool_calls(spawn("Find trains", "trains")), Reply.text("Asked."))
    found = Reply.text("The 8:12.")
    conv.subagent("trains", dataclasses.replace(found, usage=(BIG, 0)))
    model_server.responder = conv
    async with subagent_daemon(tmp_path, model_server, max_depth=2) as daemon:
        client = await daemon.ws()
        await client.send({"type": "message", "session_id": "s1", "content": "Plan my trip"})
        async with asyncio.timeout(WAIT):
            while not {"Relayed: plan", "Relayed: trains"} <= set(_dones(client)):
                await client.recv()
        today = await daemon.context.runtime.usage.today("s1")
        assert today["session_tokens"] >= BIG  # the subagent's subagent's spending, in s1
        await client.close()
