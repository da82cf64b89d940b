"""Approval questions in Telegram: the fake Bot API shows the inline buttons and delivers the
button presses as callback queries; the real exec tool runs (or not) on the answer."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from countbot.config.settings import Settings
from tests.channels.fake_telegram import FakeUser
from tests.channels.harness import ALICE, Bot, telegram_bot
from tests.channels.telegram.test_channel import visible
from tests.support.scripted_model import Reply, ScriptedModelServer

COMMAND = "echo from-telegram > proof.txt"


@pytest.fixture
async def asking_bot(settings: Settings) -> AsyncIterator[Bot]:
    settings.tools.exec.approval = "always"
    async with telegram_bot(settings) as running:
        yield running


async def question_card(bot: Bot, server: ScriptedModelServer, answer: str) -> int:
    """Alice asks for the proof file; the id of the message with the approval buttons."""
    server.script(Reply.tool_calls(("exec", json.dumps({"command": COMMAND}))), Reply.text(answer))
    bot.fake.user_says("make the proof file")
    found: list[int] = []

    def posted() -> bool:
        found[:] = [m for m in bot.fake.bot_message_ids(ALICE) if bot.fake.buttons_of(ALICE, m)]
        return bool(found)

    await bot.fake.wait_until(posted, "the approval card")
    return found[0]


def card_text(bot: Bot, card: int) -> str:
    return visible(bot.fake.message_text(ALICE, card))


def button(bot: Bot, card: int, decision: str) -> str:
    return next(d for _, d in bot.fake.buttons_of(ALICE, card) if d.endswith(f":{decision}"))


async def test_approve_once_from_the_inline_keyboard_runs_the_command(
    asking_bot: Bot, settings: Settings, model_server: ScriptedModelServer
) -> None:
    bot = asking_bot
    card = await question_card(bot, model_server, "Done.")
    text = card_text(bot, card)
    assert "Approval needed" in text and COMMAND in text and "120 s" in text
    labels = [label for label, _ in bot.fake.buttons_of(ALICE, card)]
    assert labels == ["✅ Approve once", "♾ Always allow this command", "⛔ Deny"]

    # A stranger in the same chat (a group member, say) cannot answer.
    bot.fake.user_presses(ALICE, card, button(bot, card, "once"), user=FakeUser(999, "Mallory"))
    await bot.fake.wait_until(lambda: len(bot.fake.calls_to("answerCallbackQuery")) == 1)
    assert "Only the owner" in bot.fake.calls_to("answerCallbackQuery")[0].params["text"]
    assert bot.runtime.approvals.pending(), "the stranger's press answered the question"

    bot.fake.user_presses(ALICE, card, button(bot, card, "once"))
    await bot.fake.wait_until(lambda: len(bot.fake.calls_to("answerCallbackQuery")) == 2)
    assert bot.fake.calls_to("answerCallbackQuery")[1].params["text"] == "Approved once"
    await bot.fake.wait_until(
        lambda: "Approved once by telegram:100" in card_text(bot, card),
        "the card to show the decision",
    )
    assert bot.fake.buttons_of(ALICE, card) == [], "the buttons stay after the answer"
    await bot.fake.wait_until(lambda: "Done." in bot.fake.chat_messages(ALICE), "the answer")
    assert (settings.workspace / "proof.txt").read_text() == "from-telegram\n"
    [record] = await bot.runtime.audit.recent(type="approval")
    assert (record["decision"], record["answered_by"], record["channel"]) == (
        "once",
        "telegram:100",
        "telegram",
    )


async def test_deny_from_telegram_and_a_late_press_is_told_it_expired(
    asking_bot: Bot, settings: Settings, model_server: ScriptedModelServer
) -> None:
    bot = asking_bot
    card = await question_card(bot, model_server, "Not run.")
    deny, once = button(bot, card, "deny"), button(bot, card, "once")
    bot.fake.user_presses(ALICE, card, deny)
    await bot.fake.wait_until(lambda: "Not run." in bot.fake.chat_messages(ALICE), "the answer")
    assert "⛔ Denied by telegram:100" in card_text(bot, card)
    assert not (settings.workspace / "proof.txt").exists()

    bot.fake.user_presses(ALICE, card, once)  # an old button on a client that did not refresh
    await bot.fake.wait_until(lambda: len(bot.fake.calls_to("answerCallbackQuery")) == 2)
    assert "already answered" in bot.fake.calls_to("answerCallbackQuery")[1].params["text"]
    assert not (settings.workspace / "proof.txt").exists()
