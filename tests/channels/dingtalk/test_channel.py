"""The DingTalk channel end to end: dingtalk-stream's Stream mode and the robot OpenAPI against
the fake DingTalk platform, turns answered by the scripted model through the real gateway.
"""

from __future__ import annotations

from countbot.config.settings import Settings
from countbot.runtime.deliveries import DeliveryTarget
from tests.channels.dingtalk.conftest import ALICE
from tests.channels.fake_dingtalk import APP_SECRET, FakeDingTalk
from tests.channels.harness import Bot
from tests.channels.scenarios import (
    assert_secret_masked,
    user_texts,
)
from tests.support.scripted_model import Reply, ScriptedModelServer

ME = f"private:{ALICE}"
GROUP = "cidTeamGroup=="


async def test_a_streamed_answer_arrives_once_as_markdown(
    bot: Bot, fake_dingtalk: FakeDingTalk, model_server: ScriptedModelServer
) -> None:
    answer = "## Plan\n\nThe **quick** brown fox jumps over the lazy dog."
    model_server.script(Reply.text(answer, chunks=8, delay=0.1))
    fake_dingtalk.user_says("tell me a story", staff_id=ALICE)

    assert await fake_dingtalk.wait_for_messages(ME) == [answer]
    (message,) = fake_dingtalk.sent
    assert message.key == "sampleMarkdown" and message.params["title"] == "Plan"
    assert "tell me a story" in user_texts(model_server.requests[0])
    assert bot.state()["connection"] == "ok"
    assert_secret_masked(bot, "client_secret", APP_SECRET)


async def test_a_group_message_is_answered_only_when_it_mentions_the_robot(
    bot: Bot, fake_dingtalk: FakeDingTalk, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Four."))
    fake_dingtalk.user_says("chatting among ourselves", staff_id=ALICE, group=GROUP)
    fake_dingtalk.user_says("what's 2+2?", staff_id=ALICE, group=GROUP, mention=True)

    assert await fake_dingtalk.wait_for_messages(f"group:{GROUP}") == ["Four."]
    assert len(model_server.requests) == 1
    assert "among" not in user_texts(model_server.requests[0])


async def test_stop_ends_a_slow_turn(
    bot: Bot, fake_dingtalk: FakeDingTalk, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("word " * 200, chunks=100, delay=0.1))
    fake_dingtalk.user_says("write a lot", staff_id=ALICE)
    await fake_dingtalk.wait_until(lambda: bot.gateway.busy(f"dingtalk:{ME}"), "the turn")
    fake_dingtalk.user_says("/stop", staff_id=ALICE)

    (stopped,) = await fake_dingtalk.wait_for_messages(ME)
    assert stopped.endswith("_Stopped._") and not bot.gateway.busy(f"dingtalk:{ME}")


async def test_an_outage_loses_and_repeats_nothing(
    bot: Bot, fake_dingtalk: FakeDingTalk, model_server: ScriptedModelServer
) -> None:
    model_server.responder = lambda body: Reply.text(f"answer {len(model_server.requests)}")
    first = fake_dingtalk.user_says("before the outage", staff_id=ALICE)
    await fake_dingtalk.wait_for_messages(ME, 1)

    await fake_dingtalk.outage()
    await fake_dingtalk.wait_until(lambda: "reconnecting" in str(bot.state()["connection"]))
    fake_dingtalk.user_says("sent during the outage", staff_id=ALICE)
    fake_dingtalk.push(first)  # delivered at least once: an old frame again
    fake_dingtalk.recover()

    assert await fake_dingtalk.wait_for_messages(ME, 2) == ["answer 1", "answer 2"]
    asked = [user_texts(r) for r in model_server.requests]
    assert len(asked) == 2 and "during the outage" in asked[1]
    await fake_dingtalk.wait_until(lambda: bot.state()["connection"] == "ok")


async def test_files_go_out_and_a_refusal_is_not_counted(
    bot: Bot, fake_dingtalk: FakeDingTalk, settings: Settings
) -> None:
    report = settings.workspace / "report.csv"
    report.write_text("a,b\n1,2\n")
    picture = settings.workspace / "chart.png"
    picture.write_bytes(b"\x89PNG fake")
    group = f"group:{GROUP}"
    result = await bot.runtime.deliveries.deliver(
        DeliveryTarget("dingtalk", group), "Your files", [report, picture]
    )
    assert result.delivered
    assert fake_dingtalk.chat_messages(group) == ["Your files", "[sampleFile]", "[sampleImageMsg]"]
    assert fake_dingtalk.uploads == [
        ("file", "report.csv", b"a,b\n1,2\n"),
        ("image", "chart.png", b"\x89PNG fake"),
    ]
    fake_dingtalk.refuse("send")
    refused = await bot.runtime.deliveries.deliver(DeliveryTarget("dingtalk", group), "again")
    assert not refused.delivered and "robot not in chat" in refused.detail
