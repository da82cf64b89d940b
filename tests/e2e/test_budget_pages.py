"""The Usage page shows today's spend against each limit; Settings shows the context window."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import CHROMIUM
from tests.e2e.ui import ChatPage
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon
from tests.web.test_api import run_turn

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)


async def test_usage_page_shows_spend_against_the_limits_and_settings_the_window(
    chat: ChatPage, daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    daemon.settings.budget.daily_tokens = 10_000
    daemon.settings.budget.turn_tokens = 8_000
    daemon.settings.model.context_window = 8192
    model_server.script(Reply("text", content="fine", usage=(2_000, 500)))
    await run_turn(daemon, "spend", "hi")
    await chat.by_testid("nav-usage").click()
    table = chat.by_testid("usage-budget")
    await expect(table).to_contain_text("budget.daily_tokens")
    await expect(table).to_contain_text("2,500")
    await expect(table).to_contain_text("10,000")
    await expect(table).to_contain_text("25%")
    await expect(table).to_contain_text("budget.turn_tokens")
    # Housekeeping is shown apart from the answers, once there is some.
    await expect(chat.by_testid("usage-by-purpose")).to_have_count(0)
    usage = daemon.context.runtime.usage
    await usage.add("spend", "openai/test-model", 3_000, 120, 0.0, purpose="summary")
    await chat.by_testid("nav-settings").click()
    await chat.by_testid("nav-usage").click()
    purposes = chat.by_testid("usage-by-purpose")
    await expect(purposes).to_contain_text("Answers")
    await expect(purposes).to_contain_text("Summaries")
    await expect(purposes).to_contain_text("3,000")
    await chat.by_testid("nav-settings").click()
    await expect(chat.by_testid("settings-model-status")).to_contain_text(
        "Context window: 8,192 tokens"
    )
