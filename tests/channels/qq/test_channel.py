"""The QQ channel end to end: the fake QQ client connected to CountBot's OneBot endpoint, turns
answered by the scripted model through the real gateway and agent loop.
"""

from __future__ import annotations

import pytest
from websockets.exceptions import InvalidStatus

from countbot.config.settings import Settings
from countbot.runtime.deliveries import DeliveryTarget
from tests.channels.fake_onebot import BOT_QQ, FakeQQClient
from tests.channels.harness import ALICE, Bot
from tests.channels.scenarios import (
    assert_secret_masked,
    user_texts,
)
from tests.support.scripted_model import Reply, ScriptedModelServer

ME = f"private:{ALICE}"
GROUP = 900500
STRANGER = 555


async def test_an_allowed_user_gets_the_answer_as_plain_text(
    bot: Bot, fake_qq: FakeQQClient, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Hello **Alice**! Try `ls -la` or [the docs](https://x.org)."))
    await fake_qq.user_says("hi there", user=ALICE)

    assert await fake_qq.wait_for_messages(ME) == [
        "Hello Alice! Try ls -la or the docs (https://x.org)."
    ]
    assert "hi there" in user_texts(model_server.requests[0])
    session = await bot.runtime.sessions.get(f"qq:{ME}")
    assert session is not None and session.message_count == 2
    assert bot.state()["bot"] == str(BOT_QQ)
    assert_secret_masked(bot, "access_token", fake_qq.token)


async def test_a_streamed_answer_arrives_once_complete(
    bot: Bot, fake_qq: FakeQQClient, model_server: ScriptedModelServer
) -> None:
    answer = "The quick brown fox jumps over the lazy dog, then naps in the sun."
    model_server.script(Reply.text(answer, chunks=8, delay=0.1))
    await fake_qq.user_says("tell me a story", user=ALICE, as_cq_string=True)

    assert await fake_qq.wait_for_messages(ME) == [answer]
    # OneBot cannot edit: no drafts, exactly one message.
    assert len(fake_qq.calls_to("send_private_msg")) == 1
    assert "tell me a story" in user_texts(model_server.requests[0])


async def test_a_group_message_needs_a_mention_or_a_reply(
    bot: Bot, fake_qq: FakeQQClient, model_server: ScriptedModelServer
) -> None:
    chat = f"group:{GROUP}"
    model_server.script(Reply.text("First answer"), Reply.text("Second answer"))
    await fake_qq.user_says("chatting among ourselves", user=ALICE, group=GROUP)
    await fake_qq.user_says("what's 2+2?", user=ALICE, group=GROUP, mention=True)

    assert await fake_qq.wait_for_messages(chat) == ["First answer"]
    assert len(model_server.requests) == 1
    asked = user_texts(model_server.requests[0])
    assert "what's 2+2?" in asked and "chatting among ourselves" not in asked

    (answer,) = fake_qq.bot_message_ids(chat)
    await fake_qq.user_says("and times 3?", user=ALICE, group=GROUP, reply_to=answer)
    assert await fake_qq.wait_for_messages(chat, 2) == ["First answer", "Second answer"]
    # A stranger mentioning the bot in a group gets nothing, not even a code.
    await fake_qq.user_says("me too", user=STRANGER, group=GROUP, mention=True)
    await fake_qq.user_says("one more", user=ALICE, group=GROUP, mention=True)
    model_server.script(Reply.text("Third answer"))
    assert (await fake_qq.wait_for_messages(chat, 3))[2] == "Third answer"
    assert len(model_server.requests) == 3


async def test_a_reply_on_the_heels_of_the_answer_is_still_for_the_bot(
    bot: Bot, fake_qq: FakeQQClient, model_server: ScriptedModelServer
) -> None:
    # The client answers the send and posts a reply to it back to back: the reply must find the
    # answer already known as the bot's, or it would be taken for chatter among users.
    chat = f"group:{GROUP}"
    model_server.script(Reply.text("First answer"), Reply.text("Second answer"))
    fake_qq.after_next_send = lambda sent: fake_qq.message_event(
        "and times 3?", user=ALICE, group=GROUP, reply_to=sent
    )
    await fake_qq.user_says("what's 2+2?", user=ALICE, group=GROUP, mention=True)

    assert await fake_qq.wait_for_messages(chat, 2) == ["First answer", "Second answer"]
    assert "and times 3?" in user_texts(model_server.requests[1])


async def test_stop_ends_a_slow_turn(
    bot: Bot, fake_qq: FakeQQClient, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("word " * 200, chunks=100, delay=0.1))
    await fake_qq.user_says("write a lot", user=ALICE)
    await fake_qq.wait_until(lambda: bot.gateway.busy(f"qq:{ME}"), "the turn to start")
    await fake_qq.user_says("/stop", user=ALICE)

    (stopped,) = await fake_qq.wait_for_messages(ME)
    assert stopped.endswith("Stopped.")
    assert not bot.gateway.busy(f"qq:{ME}")


async def test_commands_answer_without_a_turn(
    bot: Bot, fake_qq: FakeQQClient, model_server: ScriptedModelServer
) -> None:
    await fake_qq.user_says("/help", user=ALICE)
    await fake_qq.user_says("/status", user=ALICE)
    await fake_qq.user_says("/new", user=ALICE)
    help_text, status, new = await fake_qq.wait_for_messages(ME, 3)
    assert "/stop" in help_text and f"qq:{ME}" in status and "new conversation" in new
    assert model_server.requests == []


async def test_an_outage_loses_and_repeats_nothing(
    bot: Bot, fake_qq: FakeQQClient, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("the slow answer", chunks=5, delay=0.3), Reply.text("later"))
    first = await fake_qq.user_says("before the outage", user=ALICE)
    await fake_qq.wait_until(lambda: bot.gateway.busy(f"qq:{ME}"), "the turn to start")

    # The client drops while the answer is being written, then comes back and (as clients
    # may after a reconnect) sends the same event again.
    await fake_qq.disconnect()
    await fake_qq.wait_until(lambda: "waiting" in bot.state()["connection"])
    await fake_qq.wait_until(lambda: not bot.gateway.busy(f"qq:{ME}"), "the turn to end")
    await fake_qq.connect(bot.state()["endpoint"])
    await fake_qq.resend(first)
    await fake_qq.user_says("after the outage", user=ALICE)

    assert await fake_qq.wait_for_messages(ME, 2) == ["the slow answer", "later"]
    asked = [user_texts(r) for r in model_server.requests]
    assert len(asked) == 2 and "after the outage" in asked[1]
    assert bot.state()["state"] == "running" and bot.state()["connection"] == "ok"


async def test_a_refused_send_is_not_counted_as_delivered(bot: Bot, fake_qq: FakeQQClient) -> None:
    fake_qq.refuse("send_private_msg")
    result = await bot.runtime.deliveries.deliver(DeliveryTarget("qq", ME), "hello")
    assert not result.delivered and "消息发送失败" in result.detail

    result = await bot.runtime.deliveries.deliver(DeliveryTarget("qq", ME), "hello")
    assert result.delivered and fake_qq.chat_messages(ME) == ["hello"]


async def test_files_go_out_through_the_message_path(
    bot: Bot, fake_qq: FakeQQClient, settings: Settings
) -> None:
    report = settings.workspace / "report.csv"
    report.write_text("a,b\n1,2\n")
    picture = settings.workspace / "chart.png"
    picture.write_bytes(b"\x89PNG fake")
    group = f"group:{GROUP}"
    result = await bot.runtime.deliveries.deliver(
        DeliveryTarget("qq", group), "Your files", [report, picture]
    )

    assert result.delivered and len(result.message_ids) == 3
    assert fake_qq.chat_messages(group) == ["Your files", "[image]"]
    (upload,) = fake_qq.uploads
    assert (upload.chat, upload.name, upload.data) == (group, "report.csv", b"a,b\n1,2\n")


@pytest.mark.parametrize(
    ("token", "headers"),
    [("wrong-token", {}), (None, {"Origin": "http://evil.example"})],
    ids=["wrong token", "a browser"],
)
async def test_only_the_qq_client_with_the_token_gets_in(
    bot: Bot, fake_qq: FakeQQClient, token: str | None, headers: dict[str, str]
) -> None:
    intruder = FakeQQClient()
    with pytest.raises(InvalidStatus) as refused:
        await intruder.connect(bot.state()["endpoint"], token=token, headers=headers)
    assert refused.value.response.status_code in (401, 403)
    assert bot.state()["connection"] == "ok", "the real client stays connected"


async def test_without_an_access_token_the_channel_refuses_to_start(settings: Settings) -> None:
    from countbot.channels.qq.channel import QQChannel
    from countbot.config.settings import QQSettings

    problem = QQChannel.problem(QQSettings(enabled=True), "channels.qq")
    assert problem is not None and "access_token" in problem
