"""What each agent spends: its own budget counts its own conversations, and the usage report
shows the spending by agent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.agents.conftest import GRANDMA, OWNER, Agents, three_agents
from tests.channels.fake_telegram import FakeTelegram, FakeUser
from tests.support.scripted_model import Reply, ScriptedModelServer

LIMIT = 500_000


@pytest.fixture
async def budgeted_agents(
    tmp_path: Path, model_server: ScriptedModelServer, fake_telegram: FakeTelegram
) -> AsyncIterator[Agents]:
    family = {"budget": {"daily_tokens": LIMIT}}
    async with three_agents(tmp_path, model_server, fake_telegram, family=family) as running:
        yield running


async def test_an_agents_own_budget_counts_its_own_spending(budgeted_agents: Agents) -> None:
    agents, telegram = budgeted_agents, budgeted_agents.telegram
    agents.model.script(Reply.text("main spent", usage=(900_000, 5)))
    telegram.user_says("spend", user=FakeUser(OWNER))
    assert (await telegram.wait_for_messages(OWNER)) == ["main spent"]
    # Main's spending is not family's: family still answers, and spends past its own limit.
    agents.model.script(Reply.text("family spent", usage=(600_000, 5)))
    telegram.user_says("spend", user=FakeUser(GRANDMA))
    assert (await telegram.wait_for_messages(GRANDMA)) == ["family spent"]
    telegram.user_says("and more", user=FakeUser(GRANDMA))
    stopped = (await telegram.wait_for_messages(GRANDMA, 2))[1]
    assert stopped.startswith("Budget reached") and "budget.daily_tokens" in stopped
    telegram.user_says("still there?", user=FakeUser(OWNER))  # main has no limit
    assert (await telegram.wait_for_messages(OWNER, 2))[1] == "answered by main"
    async with agents.daemon.http() as http:
        report = (await http.get("/api/usage")).json()
    spent = {row["agent"]: row["prompt_tokens"] for row in report["by_agent"]}
    assert spent["main"] >= 900_000 and 600_000 <= spent["family"] < 900_000
    [limit] = report["agents_today"]["family"]["limits"]
    assert (limit["key"], limit["limit"]) == ("daily_tokens", LIMIT)
    assert LIMIT < limit["spent"] < 900_000
