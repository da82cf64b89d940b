"""The first page a new user sees says what this install can do, and how to turn on what it
cannot: a real daemon, real Chromium, the list `countbot doctor` prints too."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from countbot.config.structs import replaced
from tests.e2e.conftest import CHROMIUM
from tests.e2e.ui import ChatPage

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)


async def test_the_empty_chat_lists_what_is_on_and_how_to_turn_on_the_rest(
    chat: ChatPage,
) -> None:
    rows = chat.by_testid("capabilities").locator("li")
    await expect(rows).to_have_count(5)
    model = chat.by_testid("capability-model")
    await expect(model).to_have_attribute("data-on", "true")
    await expect(model).to_contain_text("Model")
    await expect(model).to_contain_text("openai/test-model")
    # The tests install every extra that needs no account.
    for key in ("memory", "documents", "voice"):
        await expect(chat.by_testid(f"capability-{key}")).to_have_attribute("data-on", "true")
    await expect(chat.by_testid("capability-memory")).to_contain_text("Memory by meaning")

    settings = chat.daemon.context.runtime.settings
    settings.memory = replaced(settings.memory, embeddings="off")
    await chat.reload()
    memory = chat.by_testid("capability-memory")
    await expect(memory).to_have_attribute("data-on", "false")
    await expect(memory.locator(".capability-hint")).to_have_text(
        "set memory.embeddings: use-multilingual"
    )
    await chat.by_testid("lang-switch").select_option("zh-CN")
    await expect(memory).to_contain_text("按意思搜索记忆")
    await expect(memory).to_contain_text("未开启")
