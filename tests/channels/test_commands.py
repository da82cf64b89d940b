"""The chat commands, through Telegram: /stop really cancels, /new starts afresh, /status, /help."""

from __future__ import annotations

import asyncio

from countbot.channels.kit.commands import HELP
from tests.channels.harness import ALICE, Bot
from tests.support.scripted_model import Reply, ScriptedModelServer


async def test_stop_cancels_a_slow_turn_for_real(
    bot: Bot, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.hang(60))
    bot.fake.user_says("write me a very long poem")
    await bot.fake.wait_until(lambda: len(model_server.requests) == 1, "the model request")
    await bot.fake.wait_until(lambda: bool(bot.fake.calls_to("sendChatAction")), "typing")

    bot.fake.user_says("/stop")

    assert await bot.fake.wait_for_messages(ALICE) == ["<i>Stopped.</i>"]
    assert await asyncio.to_thread(model_server.wait_abandoned, 1), "the model call kept running"
    assert not bot.gateway.busy(f"telegram:{ALICE}")


async def test_stop_with_nothing_running_says_so(bot: Bot) -> None:
    bot.fake.user_says("/stop")
    assert await bot.fake.wait_for_messages(ALICE) == ["Nothing is running."]


async def test_new_starts_a_fresh_session(bot: Bot, model_server: ScriptedModelServer) -> None:
    model_server.script(Reply.text("Noted: 7319."), Reply.text("Which number?"))
    bot.fake.user_says("remember the number 7319")
    await bot.fake.wait_for_messages(ALICE, 1)

    bot.fake.user_says("/new")
    await bot.fake.wait_for_messages(ALICE, 2)
    bot.fake.user_says("what was the number?")
    messages = await bot.fake.wait_for_messages(ALICE, 3)

    assert messages[1].startswith("Started a new conversation")
    # The new conversation carries no history: the system prompt and the new message only. What
    # the user said before may come back only as memory, cited and marked as such.
    system, asked = model_server.requests[1]["messages"]
    assert system["role"] == "system" and "7319" not in str(system)
    assert asked["role"] == "user" and asked["content"].endswith("what was the number?")
    before_recall, _, rest = asked["content"].partition("[Recalled from memory:")
    recalled, _, after_recall = rest.partition("[End of recalled memory]")
    assert "7319" not in before_recall + after_recall
    assert "7319" not in recalled or f"session telegram:{ALICE}" in recalled
    sessions = [s.id for s in await bot.runtime.sessions.list()]
    assert f"telegram:{ALICE}" in sessions
    assert any(s.startswith(f"telegram:{ALICE}:") for s in sessions)


async def test_status_and_help(bot: Bot) -> None:
    bot.fake.user_says("/status")
    (status,) = await bot.fake.wait_for_messages(ALICE, 1)
    assert f"<code>telegram:{ALICE}</code>" in status
    assert "<code>openai/test-model</code>" in status and "idle" in status

    bot.fake.user_says(f"/help@{'countbot_test_bot'}")
    messages = await bot.fake.wait_for_messages(ALICE, 2)
    assert messages[1] == HELP
