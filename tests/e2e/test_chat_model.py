"""The chat's model selector: the picked model answers, and the chat keeps it after a reload."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import CHROMIUM
from tests.e2e.ui import ChatPage
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon, DaemonFactory

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)


@pytest.fixture
async def daemon(start_daemon: DaemonFactory) -> AsyncIterator[Daemon]:
    """A daemon whose model has a fallback, so the chat has two models to pick from."""
    async with start_daemon(model={"fallbacks": ["openai/other-model"]}) as running:
        yield running


async def test_the_picked_model_answers_and_stays_picked_after_a_reload(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Hello from the other."), Reply.text("Again the other."))
    picker = chat.by_testid("chat-model")
    await expect(picker).to_be_visible()
    await expect(picker).to_have_value("openai/test-model")
    await picker.select_option("openai/other-model")
    await chat.send("who answers?")
    answer = chat.messages("assistant").last
    await expect(chat.answer_text(answer)).to_have_text("Hello from the other.")
    await expect(answer.locator(".meta-model")).to_have_text("openai/other-model")
    await chat.reload()
    await expect(picker).to_have_value("openai/other-model")
    await chat.send("and now?")
    await expect(chat.answer_text(chat.messages("assistant").last)).to_have_text("Again the other.")
    assert [r["model"] for r in model_server.requests] == ["other-model", "other-model"]
