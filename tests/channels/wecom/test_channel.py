"""The WeCom channel end to end: wecom-aibot-python-sdk over TLS against the fake WeCom, turns
answered by the scripted model through the real gateway and agent loop.
"""

from __future__ import annotations

from countbot.config.settings import Settings
from countbot.runtime.deliveries import DeliveryTarget
from tests.channels.fake_wecom import SECRET, FakeWeCom
from tests.channels.harness import Bot
from tests.channels.scenarios import (
    assert_secret_masked,
    user_texts,
)
from tests.channels.wecom.conftest import ALICE
from tests.support.scripted_model import Reply, ScriptedModelServer

GROUP = "wrGroupChatId"


async def test_the_answer_streams_into_one_message(
    bot: Bot, fake_wecom: FakeWeCom, model_server: ScriptedModelServer
) -> None:
    answer = "The quick brown fox jumps over the **lazy** dog, then naps in the sun."
    model_server.script(Reply.text(answer, chunks=8, delay=0.15))
    fake_wecom.user_says("tell me a story", user=ALICE)

    assert await fake_wecom.wait_for_messages(ALICE) == [answer]
    (message,) = fake_wecom.chat(ALICE)
    assert message.updates >= 2, "the stream was not updated while the answer was written"
    assert "tell me a story" in user_texts(model_server.requests[0])
    assert bot.state()["connection"] == "ok"
    assert_secret_masked(bot, "secret", SECRET)


async def test_a_group_mention_is_answered_without_the_mention(
    bot: Bot, fake_wecom: FakeWeCom, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Four."))
    fake_wecom.user_says("what's 2+2?", user=ALICE, group=GROUP, mention=True)

    assert await fake_wecom.wait_for_messages(GROUP) == ["Four."]
    asked = user_texts(model_server.requests[0])
    assert "what's 2+2?" in asked and "@CountBot" not in asked


async def test_stop_ends_a_slow_turn(
    bot: Bot, fake_wecom: FakeWeCom, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("word " * 200, chunks=100, delay=0.1))
    fake_wecom.user_says("write a lot", user=ALICE)
    await fake_wecom.wait_until(lambda: bot.gateway.busy(f"wecom:{ALICE}"), "the turn")
    fake_wecom.user_says("/stop", user=ALICE)

    (stopped,) = await fake_wecom.wait_for_messages(ALICE)
    assert stopped.endswith("_Stopped._") and not bot.gateway.busy(f"wecom:{ALICE}")


async def test_an_outage_loses_and_repeats_nothing(
    bot: Bot, fake_wecom: FakeWeCom, model_server: ScriptedModelServer
) -> None:
    model_server.responder = lambda body: Reply.text(f"answer {len(model_server.requests)}")
    first = fake_wecom.user_says("before the outage", user=ALICE)
    await fake_wecom.wait_for_messages(ALICE, 1)

    await fake_wecom.outage()
    await fake_wecom.wait_until(lambda: "reconnecting" in str(bot.state()["connection"]))
    fake_wecom.user_says("sent during the outage", user=ALICE)
    fake_wecom.push(first)  # an old callback again
    fake_wecom.recover()

    assert await fake_wecom.wait_for_messages(ALICE, 2) == ["answer 1", "answer 2"]
    asked = [user_texts(r) for r in model_server.requests]
    assert len(asked) == 2 and "during the outage" in asked[1]
    await fake_wecom.wait_until(lambda: bot.state()["connection"] == "ok")


async def test_proactive_messages_count_only_when_accepted(
    bot: Bot, fake_wecom: FakeWeCom, settings: Settings
) -> None:
    result = await bot.runtime.deliveries.deliver(DeliveryTarget("wecom", GROUP), "Hello **team**")
    assert result.delivered and fake_wecom.chat_messages(GROUP) == ["Hello **team**"]

    fake_wecom.refuse("aibot_send_msg")
    refused = await bot.runtime.deliveries.deliver(DeliveryTarget("wecom", GROUP), "again")
    assert not refused.delivered and "chat not found" in refused.detail

    report = settings.workspace / "report.csv"
    report.write_text("a,b\n")
    with_file = await bot.runtime.deliveries.deliver(DeliveryTarget("wecom", GROUP), "", [report])
    assert not with_file.delivered and "cannot send files" in with_file.detail
