"""Who may talk to the bot: default deny, pairing codes approved with the real CLI, allow-lists."""

from __future__ import annotations

import re

from countbot.channels.kit.intake import TOO_FAST
from countbot.config.settings import Settings
from tests.channels.fake_telegram import FakeUser
from tests.channels.harness import ALICE, Bot, countbot_cli, telegram_bot
from tests.support.scripted_model import Reply, ScriptedModelServer

STRANGER = FakeUser(555, "Mallory", "mallory")


def pairing_code(message: str) -> str:
    found = re.search(r"pairing approve telegram ([A-Z0-9]{6})", message)
    assert found, f"no pairing code in {message!r}"
    return found.group(1)


async def test_a_stranger_gets_a_pairing_code_and_is_answered_once_approved(
    bot: Bot, model_server: ScriptedModelServer, settings: Settings
) -> None:
    model_server.script(Reply.text("Nice to meet you, Mallory."))
    bot.fake.user_says("hello?", user=STRANGER)
    (offer,) = await bot.fake.wait_for_messages(STRANGER.id)
    code = pairing_code(offer)
    bot.fake.user_says("hello??", user=STRANGER)
    bot.fake.user_says("anyone?")  # from Alice: once she is answered, Mallory's was handled
    await bot.fake.wait_for_messages(ALICE)
    assert bot.fake.chat_messages(STRANGER.id) == [offer], "a second code within the hour"
    assert len(model_server.requests) == 1 and "anyone?" in str(model_server.requests[0])

    status, listed = await countbot_cli(settings, "pairing", "list")
    assert status == 0 and code in listed and "@mallory" in listed
    status, output = await countbot_cli(settings, "pairing", "approve", "telegram", code.lower())
    assert status == 0, output
    assert "555" in output and "@mallory" in output

    model_server.script(Reply.text("Nice to meet you, Mallory."))
    bot.fake.user_says("hello again", user=STRANGER)
    messages = await bot.fake.wait_for_messages(STRANGER.id, 2)
    assert messages[1] == "Nice to meet you, Mallory."
    assert "hello again" in str(model_server.requests[-1]["messages"][-1])


async def test_an_unknown_code_is_refused_by_the_cli(bot: Bot, settings: Settings) -> None:
    status, output = await countbot_cli(settings, "pairing", "approve", "telegram", "ZZZZZZ")
    assert status == 1 and "no pending telegram pairing code" in output


async def test_a_stranger_in_a_group_gets_no_code_and_no_turn(
    bot: Bot, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Hi group"))
    bot.fake.user_mentions_bot("hi bot", user=STRANGER, chat_id=-7, chat_type="group")
    bot.fake.user_mentions_bot("hi bot", user=FakeUser(ALICE), chat_id=-7, chat_type="group")
    assert await bot.fake.wait_for_messages(-7) == ["Hi group"]
    assert len(model_server.requests) == 1


async def test_usernames_and_the_wildcard_open_the_door(
    settings: Settings, model_server: ScriptedModelServer
) -> None:
    async with telegram_bot(settings, allow_from=["@Mallory"]) as bot:
        model_server.script(Reply.text("Hello by name"))
        bot.fake.user_says("hi", user=STRANGER)
        assert await bot.fake.wait_for_messages(STRANGER.id) == ["Hello by name"]

        settings.channels.telegram.allow_from = ["*"]  # read live: no restart needed
        model_server.script(Reply.text("Hello anyone"))
        bot.fake.user_says("hi", user=FakeUser(777, "Eve", None))
        assert await bot.fake.wait_for_messages(777) == ["Hello anyone"]


async def test_a_flooding_sender_is_cut_off_and_told_once(
    settings: Settings, model_server: ScriptedModelServer
) -> None:
    model_server.responder = lambda body: Reply.text(f"answer {len(model_server.requests)}")
    async with telegram_bot(settings, rate_limit_per_minute=2) as bot:
        for n in range(5):
            bot.fake.user_says(f"message {n}")
        messages = await bot.fake.wait_for_messages(ALICE, 3)

    assert sorted(messages) == sorted(["answer 1", "answer 2", TOO_FAST])
    assert len(model_server.requests) == 2


async def test_a_message_delivered_twice_runs_once(
    bot: Bot, model_server: ScriptedModelServer
) -> None:
    model_server.responder = lambda body: Reply.text(f"answer {len(model_server.requests)}")
    bot.fake.user_says("only once please")
    bot.fake.repeat_last_message()
    bot.fake.user_says("second")
    assert await bot.fake.wait_for_messages(ALICE, 2) == ["answer 1", "answer 2"]
    assert len(model_server.requests) == 2
