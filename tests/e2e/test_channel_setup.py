"""A channel set up from the browser alone: Telegram against its fake Bot API, end to end."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from countbot.config.secrets_file import secrets_path
from tests.channels.fake_telegram import FakeTelegram
from tests.channels.harness import ALICE
from tests.e2e.conftest import CHROMIUM
from tests.e2e.ui import ChatPage
from tests.support.scripted_model import Reply, ScriptedModelServer

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)


async def test_telegram_is_set_up_and_answers_from_the_channels_page(
    chat: ChatPage, fake_telegram: FakeTelegram, model_server: ScriptedModelServer
) -> None:
    await chat.by_testid("nav-channels").click()
    telegram = chat.by_testid("channel-item").filter(has_text="Telegram")
    await telegram.get_by_test_id("channel-setup").click()
    form = chat.by_testid("channel-form")
    await expect(form).to_contain_text("@BotFather")
    await form.get_by_test_id("channel-field-token").fill(fake_telegram.token)
    await form.get_by_test_id("channel-field-base_url").fill(fake_telegram.base_url)
    await form.get_by_test_id("channel-field-base_file_url").fill(fake_telegram.base_file_url)
    await form.get_by_test_id("channel-field-poll_timeout").fill("2")
    await form.get_by_test_id("channel-allow-from").fill(str(ALICE))
    await form.get_by_test_id("channel-enabled").check()
    await chat.by_testid("lang-switch").select_option("zh-CN")
    await chat.screenshot("channel_setup_zh")
    await chat.by_testid("lang-switch").select_option("en")
    await form.get_by_test_id("channel-save").click()
    await expect(telegram).to_have_attribute("data-state", "running")
    await chat.screenshot("channel_setup_running")

    # The token went to secrets.yaml; config.yaml holds only a reference to it.
    config = chat.daemon.settings.config_path
    assert config is not None
    assert fake_telegram.token not in config.read_text(encoding="utf-8")
    assert fake_telegram.token in secrets_path(config).read_text(encoding="utf-8")

    model_server.script(Reply.text("Hello from CountBot."))
    fake_telegram.user_says("hi bot")
    replies = await fake_telegram.wait_for_messages(ALICE)
    assert replies[-1] == "Hello from CountBot."

    # Switched off from the page, it stops.
    await telegram.get_by_test_id("channel-setup").click()
    await chat.by_testid("channel-enabled").uncheck()
    await chat.by_testid("channel-save").click()
    await expect(telegram).to_have_attribute("data-state", "disabled")


async def test_a_refused_token_stops_the_channel_and_no_network_is_said_in_words(
    chat: ChatPage, fake_telegram: FakeTelegram
) -> None:
    await chat.by_testid("nav-channels").click()
    telegram = chat.by_testid("channel-item").filter(has_text="Telegram")
    await telegram.get_by_test_id("channel-setup").click()
    form = chat.by_testid("channel-form")
    await expect(form.get_by_test_id("channel-field-group_mode")).to_have_value("mention")
    await expect(form).to_contain_text("In group chats")
    await expect(form).to_contain_text("Bot API address")

    # No network: the address of the platform cannot be looked up (`.invalid` never resolves).
    await form.get_by_test_id("channel-field-token").fill(fake_telegram.token)
    await form.get_by_test_id("channel-field-base_url").fill("http://telegram.invalid/bot")
    await form.get_by_test_id("channel-enabled").check()
    await form.get_by_test_id("channel-save").click()
    status = form.get_by_test_id("channel-status")
    await expect(status).to_contain_text("Saved, but it cannot connect: the platform's address")
    await expect(status).to_have_attribute("data-kind", "error")
    await expect(telegram).to_contain_text("is this machine online?")
    await chat.screenshot("channel_setup_no_network")

    # A token the platform refuses (401): the channel stops and says so, with no retries.
    await telegram.get_by_test_id("channel-setup").click()
    form = chat.by_testid("channel-form")
    await form.get_by_test_id("channel-field-token").fill("123:not-the-token")
    await form.get_by_test_id("channel-field-base_url").fill(fake_telegram.base_url)
    await form.get_by_test_id("channel-save").click()
    status = form.get_by_test_id("channel-status")
    await expect(status).to_contain_text("Telegram rejected the bot token (401 Unauthorized)")
    await expect(telegram).to_have_attribute("data-state", "rejected")
    await expect(telegram).to_contain_text("token rejected")
    async with chat.daemon.http() as http:
        [shown] = [c for c in (await http.get("/api/channels")).json()["channels"]
                   if c["name"] == "telegram"]  # fmt: skip
    assert (shown["state"], shown["problem"], shown["retry_at"]) == ("rejected", "rejected", None)
    await chat.by_testid("lang-switch").select_option("zh-CN")
    await expect(telegram).to_contain_text("令牌被拒绝")
    await expect(telegram).to_contain_text("平台拒绝了令牌或密钥")
    await chat.screenshot("channel_setup_rejected_zh")
    page = await chat.page.content()
    assert "Errno" not in page and "Error:" not in page and "InvalidToken" not in page
