"""The Feishu channel end to end: lark-oapi's long connection and OpenAPI client against the fake
Feishu platform, turns answered by the scripted model through the real gateway and agent loop.
"""

from __future__ import annotations

from countbot.config.settings import Settings
from countbot.runtime.deliveries import DeliveryTarget
from tests.channels.fake_feishu import APP_SECRET, FakeFeishu
from tests.channels.feishu.conftest import ALICE
from tests.channels.harness import Bot
from tests.channels.scenarios import (
    assert_secret_masked,
    user_texts,
)
from tests.support.scripted_model import Reply, ScriptedModelServer

ME = f"oc_p2p_{ALICE}"
GROUP = "oc_group_team"


async def test_the_answer_streams_into_one_card_updated_in_place(
    bot: Bot, fake_feishu: FakeFeishu, model_server: ScriptedModelServer
) -> None:
    answer = "The quick brown fox jumps over the **lazy** dog, then naps in the sun."
    model_server.script(Reply.text(answer, chunks=8, delay=0.15))
    fake_feishu.user_says("tell me a story", user=ALICE)

    assert await fake_feishu.wait_for_messages(ME) == [answer]
    (card,) = fake_feishu.messages(ME)
    assert card.msg_type == "interactive" and card.updates >= 2
    assert card.content["elements"][0]["tag"] == "markdown"
    assert "tell me a story" in user_texts(model_server.requests[0])
    assert bot.state()["bot"] == "CountBot" and bot.state()["connection"] == "ok"
    assert_secret_masked(bot, "app_secret", APP_SECRET)


async def test_markdown_is_shown_as_card_markdown_without_tags(
    bot: Bot, fake_feishu: FakeFeishu, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text('## Plan\n\nPing <at user_id="all"></at> and run `a<b`'))
    fake_feishu.user_says("plan?", user=ALICE)

    (shown,) = await fake_feishu.wait_for_messages(ME)
    assert shown == '**Plan**\n\nPing &lt;at user_id="all"&gt;&lt;/at&gt; and run `a<b`'


async def test_a_group_message_needs_a_mention_or_a_reply(
    bot: Bot, fake_feishu: FakeFeishu, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("First answer"), Reply.text("Second answer"))
    fake_feishu.user_says("chatting among ourselves", user=ALICE, chat_id=GROUP, group=True)
    fake_feishu.user_says("what's 2+2?", user=ALICE, chat_id=GROUP, group=True, mention=True)

    assert await fake_feishu.wait_for_messages(GROUP) == ["First answer"]
    asked = user_texts(model_server.requests[0])
    assert "what's 2+2?" in asked and "@_user_1" not in asked and "among" not in asked

    (answer,) = fake_feishu.messages(GROUP)
    fake_feishu.user_says(
        "and times 3?", user=ALICE, chat_id=GROUP, group=True, reply_to=answer.message_id
    )
    assert await fake_feishu.wait_for_messages(GROUP, 2) == ["First answer", "Second answer"]
    assert len(model_server.requests) == 2


async def test_stop_ends_a_slow_turn(
    bot: Bot, fake_feishu: FakeFeishu, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("word " * 200, chunks=100, delay=0.1))
    fake_feishu.user_says("write a lot", user=ALICE)
    await fake_feishu.wait_until(lambda: bot.gateway.busy(f"feishu:{ME}"), "the turn to start")
    fake_feishu.user_says("/stop", user=ALICE)

    (stopped,) = await fake_feishu.wait_for_messages(ME)
    assert stopped.endswith("_Stopped._") and not bot.gateway.busy(f"feishu:{ME}")


async def test_an_outage_loses_and_repeats_nothing(
    bot: Bot, fake_feishu: FakeFeishu, model_server: ScriptedModelServer
) -> None:
    model_server.responder = lambda body: Reply.text(f"answer {len(model_server.requests)}")
    first = fake_feishu.user_says("before the outage", user=ALICE)
    await fake_feishu.wait_for_messages(ME, 1)

    await fake_feishu.outage()
    await fake_feishu.wait_until(lambda: "reconnecting" in str(bot.state()["connection"]))
    fake_feishu.user_says("sent during the outage", user=ALICE)
    fake_feishu.push(first)  # Feishu delivers at least once: an old event again
    fake_feishu.recover()

    assert await fake_feishu.wait_for_messages(ME, 2) == ["answer 1", "answer 2"]
    asked = [user_texts(r) for r in model_server.requests]
    assert len(asked) == 2 and "during the outage" in asked[1]
    await fake_feishu.wait_until(lambda: bot.state()["connection"] == "ok")


async def test_files_go_out_and_a_refusal_is_not_counted(
    bot: Bot, fake_feishu: FakeFeishu, settings: Settings
) -> None:
    report = settings.workspace / "report.csv"
    report.write_text("a,b\n1,2\n")
    picture = settings.workspace / "chart.png"
    picture.write_bytes(b"\x89PNG fake")
    result = await bot.runtime.deliveries.deliver(
        DeliveryTarget("feishu", GROUP), "Your files", [report, picture]
    )
    assert result.delivered and fake_feishu.chat_messages(GROUP) == [
        "Your files",
        "[file]",
        "[image]",
    ]
    assert sorted(fake_feishu.uploads) == [
        ("image", b"\x89PNG fake"),
        ("report.csv", b"a,b\n1,2\n"),
    ]

    fake_feishu.refuse("send")
    refused = await bot.runtime.deliveries.deliver(DeliveryTarget("feishu", GROUP), "again")
    assert not refused.delivered and "230002" in refused.detail
