"""A fresh install in a real browser: no model configured, no key, the built-in model answers,
the page says so calmly, and Settings offers the catalogue."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, expect

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, browser
from tests.e2e.ui import ChatPage
from tests.local_model.conftest import MODEL_WAIT, LocalDaemonFactory
from tests.support.scripted_model import ScriptedModelServer

pytest.importorskip("xllamacpp", reason="the local extra: pip install -e '.[local]'")

__all__ = ["CHROMIUM_ARGS", "browser"]

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.timeout(300),
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing"),
]


async def test_a_browser_message_is_answered_by_the_built_in_model(
    browser: Browser, start_local_daemon: LocalDaemonFactory
) -> None:
    async with start_local_daemon(name="") as daemon:
        context = await browser.new_context(locale="en-US")
        context.set_default_timeout(MODEL_WAIT * 1000)
        chat = ChatPage(await context.new_page(), daemon)
        try:
            await chat.open()
            notice = chat.by_testid("offline-notice")
            await expect(notice).to_be_visible()
            await expect(notice).to_contain_text("works offline")
            await chat.send("What is the capital of France? Answer in one sentence.")
            answer = chat.answer_text(chat.messages("assistant"))
            await expect(answer).not_to_be_empty(timeout=MODEL_WAIT * 1000)
            await expect(chat.streaming()).to_have_count(0, timeout=MODEL_WAIT * 1000)
            await chat.by_testid("nav-settings").click()
            await expect(chat.by_testid("settings-local-models")).to_contain_text("Apache-2.0")
            # The built-in model's own window, not an unknown model's default of 32,768.
            await expect(chat.by_testid("settings-model-status")).to_contain_text("4,096")
            await expect(chat.by_testid("local-model-qwen2.5-1.5b")).to_contain_text(
                "countbot models pull qwen2.5-1.5b"
            )
            await chat.by_testid("local-model-use-smollm2-135m").click()
            await expect(chat.by_testid("settings-model-name")).to_have_value("local/smollm2-135m")
            # The banner can be dismissed, and stays away on this browser.
            await chat.by_testid("offline-dismiss").click()
            await expect(notice).to_be_hidden()
            await chat.reload()
            await expect(chat.by_testid("conn-state")).to_have_attribute("data-state", "open")
            await expect(notice).to_be_hidden()
            assert not chat.errors, chat.errors
        finally:
            await chat.screenshot("local_model_browser")
            await context.close()


async def test_the_built_in_model_banner_goes_once_a_working_model_is_saved(
    browser: Browser, start_local_daemon: LocalDaemonFactory, model_server: ScriptedModelServer
) -> None:
    async with start_local_daemon(name="") as daemon:
        context = await browser.new_context(locale="en-US")
        chat = ChatPage(await context.new_page(), daemon)
        try:
            await chat.open()
            notice = chat.by_testid("offline-notice")
            await expect(notice).to_be_visible()
            model = {
                "name": "openai/test-model",
                "api_base": model_server.base_url,
                "api_key": "sk-banner-test-0123456789",
            }
            async with daemon.http() as http:
                assert (await http.put("/api/settings", json={"model": model})).status_code == 200
            await expect(notice).to_be_hidden()  # pushed to the open tab: no reload, no new page
            assert not chat.errors, chat.errors
        finally:
            await context.close()
