"""The channel manager: what it starts, how it reports, and how it brings a crashed channel back."""

from __future__ import annotations

import json

from countbot.config.loader import MASK
from countbot.config.settings import Settings
from tests.channels.fake_telegram import TOKEN, FakeTelegram
from tests.channels.harness import ALICE, Bot, running_bot, use_fake_telegram
from tests.support.scripted_model import Reply, ScriptedModelServer


async def test_a_disabled_channel_is_reported_and_not_started(
    settings: Settings, fake_telegram: FakeTelegram
) -> None:
    async with running_bot(settings, fake_telegram) as bot:
        assert bot.state()["state"] == "disabled"
        assert bot.state()["settings"]["token"] == ""
        assert bot.runtime.deliveries.channels() == []
    assert fake_telegram.calls == []


async def test_an_enabled_channel_without_a_token_is_reported_not_started(
    settings: Settings, fake_telegram: FakeTelegram
) -> None:
    use_fake_telegram(settings, fake_telegram, token=None)
    async with running_bot(settings, fake_telegram) as bot:
        assert bot.state()["state"] == "misconfigured"
        assert "token" in bot.state()["detail"]
    assert fake_telegram.calls == []


async def test_a_running_channel_reports_itself_without_its_token(bot: Bot) -> None:
    state = bot.state()
    assert state["state"] == "running"
    assert state["bot"] == "@countbot_test_bot" and state["connection"] == "ok"
    assert state["capabilities"]["max_message_length"] == 4096
    assert state["settings"]["token"] == MASK
    assert state["settings"]["allow_from"] == [str(ALICE)]
    assert TOKEN not in json.dumps(bot.manager.states())
    assert bot.runtime.deliveries.channels() == ["telegram"]


async def test_a_crashed_channel_is_restarted_and_works_again(
    bot: Bot, model_server: ScriptedModelServer
) -> None:
    bot.fake.refuse("getUpdates", status=401, description="Unauthorized")
    await bot.fake.wait_until(lambda: bot.state()["restarts"] == 1, "a restart")
    await bot.fake.wait_until(lambda: bot.state()["state"] == "running", "running again")
    assert TOKEN not in json.dumps(bot.manager.states())

    model_server.script(Reply.text("Back again."))
    bot.fake.user_says("are you there?")
    assert await bot.fake.wait_for_messages(ALICE) == ["Back again."]


async def test_stopping_lets_the_answer_being_shown_arrive(
    settings: Settings, fake_telegram: FakeTelegram, model_server: ScriptedModelServer
) -> None:
    use_fake_telegram(settings, fake_telegram)
    model_server.script(Reply.hang(60))
    async with running_bot(settings, fake_telegram):
        fake_telegram.user_says("a question the daemon will not finish")
        await fake_telegram.wait_until(lambda: len(model_server.requests) == 1)
    # The daemon shut down mid-turn: the chat is told, not left with a typing indicator.
    assert fake_telegram.chat_messages(ALICE) == ["<i>Stopped.</i>"]
