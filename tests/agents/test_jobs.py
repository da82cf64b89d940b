"""Each agent's cron jobs, heartbeat and subagents live in its own house: another agent's tools
never see them, and their turns never carry another agent's canaries."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from countbot.config.structs import replaced
from countbot.scheduler.book import JobDraft
from tests.agents.conftest import (
    GRANDMA,
    OWNER,
    Agents,
    answer_as_agent,
    canaries_in,
    three_agents,
)
from tests.channels.fake_telegram import FakeTelegram, FakeUser
from tests.support.scripted_model import Reply, ScriptedModelServer


def _tool_results(agents: Agents) -> list[str]:
    return [
        str(message.get("content"))
        for body in agents.model.requests
        for message in body["messages"]
        if message.get("role") == "tool"
    ]


def _only_family(agents: Agents) -> None:
    for request in agents.requests():
        assert {agent for agent, _ in canaries_in(request)} <= {"family"}


async def test_an_agent_neither_sees_nor_changes_another_agents_jobs(agents: Agents) -> None:
    book = agents.daemon.context.scheduler.service.book
    mains = await book.create(JobDraft("main's walk", "every", "1d", "Remind me to walk"))
    job = {"name": "work's report", "schedule": {"kind": "every", "value": "1d"}, "prompt": "Go"}
    async with agents.daemon.http() as http:
        made = await http.post("/api/cron/jobs", json={**job, "agent": "work"})
        assert made.status_code == 201 and made.json()["agent"] == "work"
        refused = await http.post("/api/cron/jobs", json={**job, "agent": "nobody"})
        assert refused.status_code == 400
    calls = [
        ("cron", json.dumps({"action": "list"})),
        ("cron", json.dumps({"action": "remove", "job_id": mains.id})),
        ("cron", json.dumps({"action": "disable", "job_id": mains.id})),
    ]
    agents.model.script(Reply.tool_calls(*calls), Reply.text("looked"))
    agents.telegram.user_says("what jobs are there?", user=FakeUser(GRANDMA))
    assert (await agents.telegram.wait_for_messages(GRANDMA)) == ["looked"]
    listed, removed, disabled = _tool_results(agents)
    assert mains.id not in listed and "walk" not in listed and "report" not in listed
    assert "Error" in removed and "Error" in disabled
    still = await book.get(mains.id)
    assert still is not None and still.enabled and still.agent == "main"


async def test_a_job_runs_in_its_agents_house(agents: Agents) -> None:
    create = {"action": "create", "name": "tea", "every": "1d", "prompt": "Remind about tea"}
    agents.model.script(Reply.tool_calls(("cron", json.dumps(create))), Reply.text("scheduled"))
    agents.telegram.user_says("remind me about tea daily", user=FakeUser(GRANDMA))
    assert (await agents.telegram.wait_for_messages(GRANDMA)) == ["scheduled"]
    [job] = await agents.daemon.context.scheduler.service.book.jobs()
    assert job.agent == "family"
    async with agents.daemon.http() as http:
        ran = await http.post(f"/api/cron/jobs/{job.id}/run", params={"wait": "1"})
    assert ran.json()["run"]["output"] == "answered by family"  # with family's USER.md
    assert (await agents.telegram.wait_for_messages(GRANDMA, 2))[1] == "answered by family"
    _only_family(agents)


def _delegating(main_notes: str) -> Any:
    """The parent delegates; the subagent tries to read main's notes and reports what it got."""

    def respond(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]
        content = str(last.get("content"))
        if last["role"] == "user" and "please delegate" in content:
            return Reply.tool_calls(("spawn", json.dumps({"task": "TASK read the notes"})))
        mine = "TASK read the notes" in content and "report of subagent" not in content
        if last["role"] == "user" and mine:
            return Reply.tool_calls(("read_file", json.dumps({"path": main_notes})))
        called = [c["function"]["name"] for c in body["messages"][-2].get("tool_calls") or []]
        if last["role"] == "tool" and called == ["read_file"]:
            return Reply.text(f"report: {content}")
        return answer_as_agent(body)

    return respond


async def test_a_subagent_works_in_its_parents_house(agents: Agents) -> None:
    agents.model.responder = _delegating(str(agents.workspaces["main"] / "notes.txt"))
    agents.telegram.user_says("please delegate the notes", user=FakeUser(GRANDMA))
    # The spawning turn's answer, then the answer to the subagent's report.
    assert (await agents.telegram.wait_for_messages(GRANDMA, 2)) == ["answered by family"] * 2
    [subagent] = [
        s
        for s in await agents.daemon.context.runtime.sessions.list(agent="family")
        if s.id.startswith("subagent:")
    ]
    assert any("outside the workspace" in result for result in _tool_results(agents))
    _only_family(agents)
    assert subagent.agent == "family"


@pytest.fixture
async def beating_agents(
    tmp_path: Path, model_server: ScriptedModelServer, fake_telegram: FakeTelegram
) -> AsyncIterator[Agents]:
    """Family with a heartbeat of its own, into its chat; a task in its HEARTBEAT.md."""
    beat = {"enabled": True, "quiet_hours": None, "target": f"telegram:{GRANDMA}"}
    async with three_agents(
        tmp_path, model_server, fake_telegram, family={"heartbeat": beat}
    ) as running:
        tasks = "- Remind about the garden\n"
        (running.workspaces["family"] / "HEARTBEAT.md").write_text(tasks, encoding="utf-8")
        yield running


async def test_an_agents_heartbeat_beats_in_its_house_into_its_own_chats(
    beating_agents: Agents,
) -> None:
    agents = beating_agents
    scheduler = agents.daemon.context.scheduler
    assert not scheduler.heartbeat.settings.enabled  # main's is off; family's is its own
    heartbeat = scheduler.heartbeats["family"]
    assert (await heartbeat.beat()).outcome == "delivered"
    assert (await agents.telegram.wait_for_messages(GRANDMA)) == ["answered by family"]
    _only_family(agents)
    info = await agents.daemon.context.runtime.sessions.get("heartbeat:family")
    assert info is not None and info.agent == "family"
    # A target bound to another agent is refused before any model call.
    asked = len(agents.model.requests)
    elsewhere = replaced(heartbeat.settings, target=f"telegram:{OWNER}")
    refused = await dataclasses.replace(heartbeat, settings=elsewhere).beat()
    assert refused.outcome == "refused" and len(agents.model.requests) == asked
