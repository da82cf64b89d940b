"""The agent switcher in the real UI (headless Chromium) over a daemon of three agents: the
sidebar lists the picked assistant's chats, and a new chat talks to it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, expect

from tests.agents.conftest import Agents, three_agents
from tests.channels.fake_telegram import FakeTelegram
from tests.e2e.conftest import WAIT_MS
from tests.e2e.ui import ChatPage
from tests.support.scripted_model import ScriptedModelServer


@pytest.fixture
async def agents(
    tmp_path: Path, model_server: ScriptedModelServer, fake_telegram: FakeTelegram
) -> AsyncIterator[Agents]:
    async with three_agents(tmp_path, model_server, fake_telegram) as running:
        yield running


async def test_the_switcher_lists_each_assistants_chats_and_starts_new_ones_with_it(
    browser: Browser, agents: Agents
) -> None:
    context = await browser.new_context(viewport={"width": 1100, "height": 760}, locale="zh-CN")
    context.set_default_timeout(WAIT_MS)
    ui = ChatPage(await context.new_page(), agents.daemon)
    await ui.open()
    switcher = ui.by_testid("agent-switcher")
    await expect(switcher).to_be_visible()
    await expect(switcher).to_have_attribute("aria-label", "助手")
    await expect(switcher.locator("option")).to_have_text(
        ["main", "family", "old（无法回答）", "work"]
    )
    await ui.send("hello")
    await expect(ui.answer_text(ui.messages("assistant"))).to_have_text(["answered by main"])
    await expect(ui.by_testid("session-item")).to_have_count(1)

    await switcher.select_option("family")
    await expect(ui.by_testid("session-item")).to_have_count(0)  # main's chat is not listed
    await ui.send("hello")
    await expect(ui.answer_text(ui.messages("assistant"))).to_have_text(["answered by family"])
    await expect(ui.by_testid("session-item")).to_have_count(1)
    family = await ui.session_id()
    info = await agents.daemon.context.runtime.sessions.get(family)
    assert info is not None and info.agent == "family"

    await ui.reload()  # the pick is kept
    await expect(switcher).to_have_value("family")
    await switcher.select_option("main")
    await expect(ui.by_testid("session-item")).to_have_count(1)
    assert not ui.errors, ui.errors
