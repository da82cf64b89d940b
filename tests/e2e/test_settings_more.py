"""The Settings page sets tools, budgets, heartbeat and the data-flow policy, checks the model on
Save, and says which changes wait for a restart."""

from __future__ import annotations

import socket

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import CHROMIUM
from tests.e2e.ui import ChatPage

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_settings_beyond_the_model_are_saved_and_applied(chat: ChatPage) -> None:
    await chat.by_testid("nav-settings").click()
    await chat.by_testid("settings-outbound").select_option("deny")
    await chat.by_testid("settings-budget-daily_tokens").fill("50000")
    await chat.by_testid("settings-exec-approval").select_option("always")
    await chat.by_testid("settings-utility").fill("openai/small-model")
    await chat.by_testid("settings-save").click()
    await expect(chat.by_testid("settings-model-check")).to_contain_text("The model answers")
    await expect(chat.by_testid("settings-model-check")).to_have_attribute("data-kind", "ok")
    # Tools are built at start-up: the page says so; the budget and the policy apply at once.
    await expect(chat.by_testid("settings-restart")).to_contain_text("tools")
    live = chat.daemon.context.runtime.settings
    assert live.security.outbound == "deny" and live.budget.daily_tokens == 50000
    assert (live.model.utility, live.model.economy) == ("openai/small-model", "")
    await expect(chat.by_testid("settings-outbound")).to_have_value("deny")
    await chat.screenshot("settings_more_en")
    await chat.by_testid("lang-switch").select_option("zh-CN")
    await expect(chat.by_testid("settings-security")).to_contain_text("数据外发")
    await chat.by_testid("settings-security").scroll_into_view_if_needed()
    await chat.screenshot("settings_more_zh")


async def test_saving_a_model_that_does_not_answer_says_so(chat: ChatPage) -> None:
    await chat.by_testid("nav-settings").click()
    await chat.page.locator("input[type=url]").first.fill(f"http://127.0.0.1:{closed_port()}/v1")
    await chat.by_testid("settings-save").click()
    check = chat.by_testid("settings-model-check")
    await expect(check).to_have_attribute("data-kind", "error")
    await expect(check).to_contain_text("the model did not answer")
