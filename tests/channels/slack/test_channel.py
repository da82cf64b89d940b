"""The Slack channel end to end: slack-sdk's Socket Mode and Web API clients against the fake
Slack, turns answered by the scripted model through the real gateway.
"""

from __future__ import annotations

import json

from countbot.config.settings import Settings
from countbot.runtime.deliveries import DeliveryTarget
from tests.channels.fake_slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.channels.harness import Bot, running_bot
from tests.channels.scenarios import (
    assert_secret_masked,
    user_texts,
)
from tests.channels.slack.conftest import ALICE, use_fake_slack
from tests.support.scripted_model import Reply, ScriptedModelServer

DM = "D0001"
TEAM_CHANNEL = "C0TEAM"


async def test_a_streamed_answer_is_updated_in_place_in_mrkdwn(
    bot: Bot, fake_slack: FakeSlack, model_server: ScriptedModelServer
) -> None:
    answer = "## Plan\n\nThe **quick** brown fox <jumps> over [the dog](https://example.com)."
    model_server.script(Reply.text(answer, chunks=8, delay=0.15))
    fake_slack.user_says("tell me a story", user=ALICE)

    await fake_slack.wait_until(lambda: "Plan*" in "".join(fake_slack.chat_messages(DM)))
    (message,) = fake_slack.posted
    assert message.text == (
        "*Plan*\n\nThe *quick* brown fox &lt;jumps&gt; over <https://example.com|the dog>."
    )
    assert len(message.edits) >= 3, "the answer was not streamed"
    assert "tell me a story" in user_texts(model_server.requests[0])
    assert bot.state()["bot"] == "@countbot" and bot.state()["connection"] == "ok"
    assert_secret_masked(bot, "bot_token", BOT_TOKEN)
    assert_secret_masked(bot, "app_token", APP_TOKEN)


async def test_a_channel_hears_only_mentions_and_a_thread_keeps_its_own_session(
    bot: Bot, fake_slack: FakeSlack, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Four."), Reply.text("Still four."))
    fake_slack.user_says("chatting among ourselves", user=ALICE, channel=TEAM_CHANNEL)
    fake_slack.user_says("what's 2+2?", user=ALICE, channel=TEAM_CHANNEL, mention=True)
    assert await fake_slack.wait_for_messages(TEAM_CHANNEL) == ["Four."]

    thread = f"{TEAM_CHANNEL}/1700000000.000777"
    fake_slack.user_says("sure?", user=ALICE, channel=TEAM_CHANNEL, thread=thread.split("/")[1])
    fake_slack.user_says(
        "sure?", user=ALICE, channel=TEAM_CHANNEL, thread=thread.split("/")[1], mention=True
    )
    assert await fake_slack.wait_for_messages(thread) == ["Still four."]
    assert fake_slack.chat_messages(TEAM_CHANNEL) == ["Four."]

    assert len(model_server.requests) == 2
    assert "among" not in user_texts(model_server.requests[0])
    # The thread started a conversation of its own: the channel's exchange is not in it.
    assert "2+2" not in json.dumps(model_server.requests[1]["messages"])
    assert bot.gateway.busy(f"slack:{thread}") is False


async def test_stop_ends_a_slow_turn(
    bot: Bot, fake_slack: FakeSlack, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("word " * 200, chunks=100, delay=0.1))
    fake_slack.user_says("write a lot", user=ALICE)
    await fake_slack.wait_until(lambda: bot.gateway.busy(f"slack:{DM}"), "the turn")
    fake_slack.user_says("/stop", user=ALICE)

    await fake_slack.wait_until(
        lambda: any(t.endswith("_Stopped._") for t in fake_slack.chat_messages(DM)), "the stop"
    )
    assert not bot.gateway.busy(f"slack:{DM}")


async def test_an_outage_loses_and_repeats_nothing(
    bot: Bot, fake_slack: FakeSlack, model_server: ScriptedModelServer
) -> None:
    model_server.responder = lambda body: Reply.text(f"answer {len(model_server.requests)}")
    first = fake_slack.user_says("before the outage", user=ALICE)
    await fake_slack.wait_for_messages(DM, 1)

    await fake_slack.outage()
    await fake_slack.wait_until(lambda: "reconnecting" in str(bot.state()["connection"]))
    fake_slack.user_says("sent during the outage", user=ALICE)
    fake_slack.redeliver(first)  # delivered at least once: an old envelope again
    fake_slack.recover()

    await fake_slack.wait_until(lambda: fake_slack.chat_messages(DM) == ["answer 1", "answer 2"])
    asked = [user_texts(r) for r in model_server.requests]
    assert len(asked) == 2 and "during the outage" in asked[1]
    await fake_slack.wait_until(lambda: bot.state()["connection"] == "ok")


async def test_files_go_out_and_a_refusal_is_not_counted(
    bot: Bot, fake_slack: FakeSlack, settings: Settings
) -> None:
    report = settings.workspace / "report.csv"
    report.write_text("a,b\n1,2\n")
    thread = f"{TEAM_CHANNEL}/1700000000.000042"
    result = await bot.runtime.deliveries.deliver(
        DeliveryTarget("slack", thread), "Your *files*", [report]
    )
    assert result.delivered
    assert fake_slack.chat_messages(thread) == ["Your _files_", "[file report.csv]"]
    assert fake_slack.uploads == [(TEAM_CHANNEL, "report.csv", b"a,b\n1,2\n")]

    fake_slack.refuse("chat.postMessage", "not_in_channel")
    refused = await bot.runtime.deliveries.deliver(DeliveryTarget("slack", "C0GONE"), "again")
    assert not refused.delivered and "not_in_channel" in refused.detail
    assert not refused.retryable


async def test_approval_buttons_answer_only_for_the_owner(
    settings: Settings, fake_slack: FakeSlack, model_server: ScriptedModelServer
) -> None:
    settings.tools.exec.approval = "always"
    use_fake_slack(settings, fake_slack)
    command = "echo from-slack > proof.txt"
    async with running_bot(settings, fake_slack, "slack") as bot:
        await fake_slack.wait_until(lambda: fake_slack.connected, "the connection")
        model_server.script(
            Reply.tool_calls(("exec", json.dumps({"command": command}))), Reply.text("Done.")
        )
        fake_slack.user_says("make the proof file", user=ALICE)
        await fake_slack.wait_until(lambda: any(p.blocks for p in fake_slack.posted), "the card")
        card = next(p for p in fake_slack.posted if p.blocks)
        assert "Approval needed" in card.text and "from-slack" in card.text
        values = [e["value"] for e in card.blocks[1]["elements"]]  # type: ignore[index]
        once = next(v for v in values if v.endswith(":once"))

        fake_slack.press("UMALLORY", DM, once)
        await fake_slack.wait_until(lambda: len(fake_slack.ephemeral) == 1)
        assert "Only the owner" in fake_slack.ephemeral[0][2]
        fake_slack.press(ALICE, DM, once)
        await fake_slack.wait_until(lambda: "Done." in fake_slack.chat_messages(DM), "the answer")
        assert fake_slack.ephemeral[1] == (DM, ALICE, "Approved once")
        assert card.blocks is None, "the buttons stay after the answer"
        assert (settings.workspace / "proof.txt").read_text() == "from-slack\n"
        [record] = await bot.runtime.audit.recent(type="approval")
        assert (record["decision"], record["answered_by"]) == ("once", f"slack:{ALICE}")
