"""The WeCom channel end to end: wecom-aibot-python-sdk over TLS against the fake WeCom, turns
answered by the scripted model through the real gateway and agent loop.
"""

from __future__ import annotations

import time

from countbot.config.settings import Settings
from countbot.runtime.outbound import DeliveryTarget
from countbot.store.pairing import PairingStore
from tests.channels.fake_wecom import SECRET, FakeWeCom
from tests.channels.harness import Bot
from tests.channels.scenarios import (
    PHOTO,
    assert_listing_intact,
    assert_model_saw_photo,
    assert_secret_masked,
    long_listing,
    run_due_job,
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


async def test_a_stranger_gets_a_pairing_code_and_talks_once_approved(
    bot: Bot, fake_wecom: FakeWeCom, model_server: ScriptedModelServer
) -> None:
    fake_wecom.user_says("hello?", user="mallory")
    (reply,) = await fake_wecom.wait_for_messages("mallory")
    assert "countbot pairing approve wecom" in reply and model_server.requests == []

    pairing = PairingStore(bot.runtime.db)
    (pending,) = await pairing.pending(time.time())
    assert await pairing.approve("wecom", pending.code, time.time()) is not None
    model_server.script(Reply.text("Welcome!"))
    fake_wecom.user_says("hello again", user="mallory")
    assert (await fake_wecom.wait_for_messages("mallory", 2))[1] == "Welcome!"


async def test_a_long_answer_is_split_with_the_code_intact(
    bot: Bot, fake_wecom: FakeWeCom, model_server: ScriptedModelServer
) -> None:
    code, answer = long_listing(300)
    model_server.script(Reply.text(answer))
    fake_wecom.user_says("a long script please", user=ALICE)

    await fake_wecom.wait_until(lambda: "Run it." in "".join(fake_wecom.chat_messages(ALICE)))
    messages = await fake_wecom.wait_for_messages(ALICE, 2)
    assert_listing_intact(messages, code, 6000, fences=True)


async def test_a_group_mention_is_answered_without_the_mention(
    bot: Bot, fake_wecom: FakeWeCom, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Four."))
    fake_wecom.user_says("what's 2+2?", user=ALICE, group=GROUP, mention=True)

    assert await fake_wecom.wait_for_messages(GROUP) == ["Four."]
    asked = user_texts(model_server.requests[0])
    assert "what's 2+2?" in asked and "@CountBot" not in asked


async def test_a_picture_reaches_the_model_as_an_image(
    bot: Bot, fake_wecom: FakeWeCom, model_server: ScriptedModelServer, settings: Settings
) -> None:
    model_server.script(Reply.text("A lovely photo."))
    fake_wecom.user_says("what is this?", user=ALICE, picture=PHOTO)

    assert await fake_wecom.wait_for_messages(ALICE) == ["A lovely photo."]
    assert_model_saw_photo(model_server, settings)


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
    result = await bot.runtime.outbound.deliver(DeliveryTarget("wecom", GROUP), "Hello **team**")
    assert result.delivered and fake_wecom.chat_messages(GROUP) == ["Hello **team**"]

    fake_wecom.refuse("aibot_send_msg")
    refused = await bot.runtime.outbound.deliver(DeliveryTarget("wecom", GROUP), "again")
    assert not refused.delivered and "chat not found" in refused.detail

    report = settings.workspace / "report.csv"
    report.write_text("a,b\n")
    with_file = await bot.runtime.outbound.deliver(DeliveryTarget("wecom", GROUP), "", [report])
    assert not with_file.delivered and "cannot send files" in with_file.detail


async def test_a_due_job_arrives_in_the_wecom_chat(
    bot: Bot, fake_wecom: FakeWeCom, model_server: ScriptedModelServer
) -> None:
    await run_due_job(bot, model_server, "wecom", ALICE, "Good morning!")
    assert await fake_wecom.wait_for_messages(ALICE) == ["Good morning!"]
