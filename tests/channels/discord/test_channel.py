"""The Discord channel end to end: discord.py's gateway and REST clients against the fake
Discord, turns answered by the scripted model through the real gateway.
"""

from __future__ import annotations

import json

from countbot.config.settings import Settings
from countbot.runtime.deliveries import DeliveryTarget
from tests.channels.discord.conftest import ALICE, DM, use_fake_discord
from tests.channels.fake_discord import TOKEN, FakeDiscord
from tests.channels.harness import Bot, running_bot
from tests.channels.scenarios import (
    assert_secret_masked,
    user_texts,
)
from tests.support.scripted_model import Reply, ScriptedModelServer

ME = str(DM)
TEAM = 610000000000000001


async def test_a_streamed_answer_is_edited_in_place(
    bot: Bot, fake_discord: FakeDiscord, model_server: ScriptedModelServer
) -> None:
    answer = "## Plan\n\nThe **quick** brown fox jumps over @everyone."
    model_server.script(Reply.text(answer, chunks=8, delay=0.15))
    fake_discord.user_says("tell me a story", user=ALICE, channel=DM)

    assert await fake_discord.wait_for_messages(ME) == [answer]
    (message,) = fake_discord.sent
    assert len(message.edits) >= 3, "the answer was not streamed"
    assert ME in fake_discord.typing
    assert "tell me a story" in user_texts(model_server.requests[0])
    assert bot.state()["bot"] == "@countbot" and bot.state()["connection"] == "ok"
    assert_secret_masked(bot, "token", TOKEN)


async def test_a_server_channel_hears_only_mentions(
    bot: Bot, fake_discord: FakeDiscord, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Four."))
    fake_discord.user_says("chatting among ourselves", user=ALICE, channel=TEAM, guild=True)
    fake_discord.user_says("what's 2+2?", user=ALICE, channel=TEAM, guild=True, mention=True)

    assert await fake_discord.wait_for_messages(str(TEAM)) == ["Four."]
    assert len(model_server.requests) == 1
    asked = user_texts(model_server.requests[0])
    assert "among" not in asked and "<@" not in asked


async def test_stop_ends_a_slow_turn(
    bot: Bot, fake_discord: FakeDiscord, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("word " * 200, chunks=100, delay=0.1))
    fake_discord.user_says("write a lot", user=ALICE, channel=DM)
    await fake_discord.wait_until(lambda: bot.gateway.busy(f"discord:{ME}"), "the turn")
    fake_discord.user_says("/stop", user=ALICE, channel=DM)

    await fake_discord.wait_until(
        lambda: any(t.endswith("_Stopped._") for t in fake_discord.chat_messages(ME)), "the stop"
    )
    assert not bot.gateway.busy(f"discord:{ME}")


async def test_an_outage_is_resumed_losing_and_repeating_nothing(
    bot: Bot, fake_discord: FakeDiscord, model_server: ScriptedModelServer
) -> None:
    model_server.responder = lambda body: Reply.text(f"answer {len(model_server.requests)}")
    first = fake_discord.user_says("before the outage", user=ALICE, channel=DM)
    await fake_discord.wait_for_messages(ME, 1)

    await fake_discord.outage()
    await fake_discord.wait_until(lambda: "reconnecting" in str(bot.state()["connection"]))
    fake_discord.user_says("sent during the outage", user=ALICE, channel=DM)
    fake_discord.dispatch("MESSAGE_CREATE", first)  # the same message delivered again
    fake_discord.recover()

    await fake_discord.wait_until(
        lambda: fake_discord.chat_messages(ME) == ["answer 1", "answer 2"], "both answers"
    )
    asked = [user_texts(r) for r in model_server.requests]
    assert len(asked) == 2 and "during the outage" in asked[1]
    await fake_discord.wait_until(lambda: bot.state()["connection"] == "ok")
    assert (fake_discord.identified, fake_discord.resumed) == (1, 1)


async def test_files_go_out_and_a_refusal_is_not_counted(
    bot: Bot, fake_discord: FakeDiscord, settings: Settings
) -> None:
    report = settings.workspace / "report.csv"
    report.write_text("a,b\n1,2\n")
    result = await bot.runtime.deliveries.deliver(
        DeliveryTarget("discord", str(TEAM)), "Your files", [report]
    )
    assert result.delivered
    assert fake_discord.chat_messages(str(TEAM)) == ["Your files", "[file report.csv]"]
    assert fake_discord.sent[-1].files == [("report.csv", b"a,b\n1,2\n")]

    fake_discord.refuse("123", 403)
    refused = await bot.runtime.deliveries.deliver(DeliveryTarget("discord", "123"), "again")
    assert not refused.delivered and "403" in refused.detail and not refused.retryable


async def test_approval_buttons_answer_only_for_the_owner(
    settings: Settings, fake_discord: FakeDiscord, model_server: ScriptedModelServer
) -> None:
    settings.tools.exec.approval = "always"
    use_fake_discord(settings, fake_discord)
    async with running_bot(settings, fake_discord, "discord") as bot:
        await fake_discord.wait_until(lambda: fake_discord.connected, "the gateway session")
        command = "echo from-discord > proof.txt"
        model_server.script(
            Reply.tool_calls(("exec", json.dumps({"command": command}))), Reply.text("Done.")
        )
        fake_discord.user_says("make the proof file", user=ALICE, channel=DM)
        await fake_discord.wait_until(lambda: any(s.components for s in fake_discord.sent))
        card = next(s for s in fake_discord.sent if s.components)
        assert "Approval needed" in card.text and "from-discord" in card.text
        ids = [b["custom_id"] for row in card.components for b in row["components"]]
        once = next(i for i in ids if i.endswith(":once"))

        fake_discord.press(500000000000000666, card, once, name="mallory")
        await fake_discord.wait_until(lambda: len(fake_discord.callbacks) == 1)
        assert "Only the owner" in fake_discord.callbacks[0]["data"]["content"]
        fake_discord.press(ALICE, card, once)
        await fake_discord.wait_until(lambda: "Done." in fake_discord.chat_messages(ME))
        assert fake_discord.callbacks[1]["data"]["content"] == "Approved once"
        assert fake_discord.callbacks[1]["data"]["flags"] == 64  # ephemeral: the presser alone
        assert card.components == [], "the buttons stay after the answer"
        assert (settings.workspace / "proof.txt").read_text() == "from-discord\n"
        [record] = await bot.runtime.audit.recent(type="approval")
        assert (record["decision"], record["answered_by"]) == ("once", f"discord:{ALICE}")
