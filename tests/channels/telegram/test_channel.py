"""The Telegram channel end to end: python-telegram-bot polling the fake Bot API server, turns
answered by the scripted model through the real gateway and agent loop.
"""

from __future__ import annotations

import base64
import html
import re

from countbot.config.settings import Settings
from countbot.config.structs import replaced
from tests.channels.fake_telegram import BOT_USERNAME, FakeTelegram, FakeUser
from tests.channels.harness import ALICE, Bot, running_bot, use_fake_telegram
from tests.support.scripted_model import Reply, ScriptedModelServer

GROUP = -500
# A 1x1 JPEG is not needed: the bytes only have to arrive unchanged.
PHOTO = b"\xff\xd8\xff\xe0fake-jpeg-bytes\xff\xd9"


def user_texts(request: dict) -> str:
    """Everything the model was shown as the last user message, as one string."""
    content = request["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content)


def visible(markup: str) -> str:
    """What a Telegram user reads from an HTML message."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


async def test_an_allowed_user_gets_the_models_answer(
    bot: Bot, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Hello **Alice**!"))
    bot.fake.user_says("hi there")

    assert await bot.fake.wait_for_messages(ALICE) == ["Hello <b>Alice</b>!"]
    assert "hi there" in user_texts(model_server.requests[0])
    assert bot.fake.calls_to("sendChatAction"), "no typing indicator while the turn ran"
    session = await bot.runtime.sessions.get(f"telegram:{ALICE}")
    assert session is not None and session.message_count == 2


async def test_the_answer_streams_into_one_message_edited_in_place(
    bot: Bot, model_server: ScriptedModelServer
) -> None:
    answer = "The quick brown fox jumps over the lazy dog, then naps in the sun."
    model_server.script(Reply.text(answer, chunks=8, delay=0.15))
    bot.fake.user_says("tell me a story")

    assert await bot.fake.wait_for_messages(ALICE) == [answer]
    drafts = [c.text for c in bot.fake.calls_to("sendMessage")]
    edits = [c.text for c in bot.fake.calls_to("editMessageText")]
    assert len(drafts) == 1 and drafts[0].endswith(" …"), "the first draft is marked unfinished"
    assert len(edits) >= 2, "the draft was not updated while the answer streamed"
    assert answer.startswith(drafts[0].removesuffix(" …"))


async def test_a_long_answer_is_split_at_4096_without_breaking_its_code_block(
    bot: Bot, model_server: ScriptedModelServer
) -> None:
    code = "\n".join(f"print('line {n:04d} of a long listing')" for n in range(180))
    intro = "Here is the script you asked for. " * 40
    answer = f"{intro}\n\n```python\n{code}\n```\n\nRun it with `python script.py`."
    model_server.script(Reply.text(answer))
    bot.fake.user_says("write me a long script")

    await bot.fake.wait_until(lambda: "python script.py" in "".join(bot.fake.chat_messages(ALICE)))
    messages = bot.fake.chat_messages(ALICE)
    assert len(messages) >= 3
    assert all(len(visible(m).encode("utf-16-le")) // 2 <= 4096 for m in messages)
    code_parts = [m for m in messages if "<pre>" in m]
    assert len(code_parts) >= 2, "the listing should span messages"
    for message in code_parts:
        assert message.count('<pre><code class="language-python">') == 1
        assert message.count("</code></pre>") == 1
    listed = [line for m in code_parts for line in visible(m).splitlines() if "print(" in line]
    assert "\n".join(listed) == code, "a line of the listing was lost or cut"


async def test_streaming_edits_wait_out_a_429(bot: Bot, model_server: ScriptedModelServer) -> None:
    bot.fake.refuse("editMessageText", retry_after=1)
    answer = " ".join(f"word{n}" for n in range(40))
    model_server.script(Reply.text(answer, chunks=20, delay=0.1))
    bot.fake.user_says("stream something")

    assert await bot.fake.wait_for_messages(ALICE) == [answer]
    refused = [c for c in bot.fake.calls_to("editMessageText") if c.status == 429]
    assert len(refused) == 1
    assert bot.fake.violations == [], "the bot called again before retry_after ran out"


async def test_a_group_message_needs_a_mention_or_a_reply(
    bot: Bot, model_server: ScriptedModelServer
) -> None:
    alice = FakeUser(ALICE)
    model_server.script(Reply.text("First answer"), Reply.text("Second answer"))
    bot.fake.user_says("chatting among ourselves", user=alice, chat_id=GROUP, chat_type="group")
    bot.fake.user_mentions_bot("what's 2+2?", user=alice, chat_id=GROUP, chat_type="group")

    assert await bot.fake.wait_for_messages(GROUP) == ["First answer"]
    assert len(model_server.requests) == 1
    asked = user_texts(model_server.requests[0])
    assert "what's 2+2?" in asked and f"@{BOT_USERNAME}" not in asked
    assert "chatting among ourselves" not in asked

    (answer,) = bot.fake.bot_message_ids(GROUP)
    bot.fake.user_says(
        "and times 3?", user=alice, chat_id=GROUP, chat_type="group", reply_to=answer
    )
    assert await bot.fake.wait_for_messages(GROUP, 2) == ["First answer", "Second answer"]


async def test_a_photo_reaches_the_model_as_an_image(
    bot: Bot, model_server: ScriptedModelServer, settings: Settings
) -> None:
    model_server.script(Reply.text("A lovely photo."))
    bot.fake.user_sends_photo(PHOTO, caption="what is this?")

    assert await bot.fake.wait_for_messages(ALICE) == ["A lovely photo."]
    content = model_server.requests[0]["messages"][-1]["content"]
    images = [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]
    assert images == [f"data:image/jpeg;base64,{base64.b64encode(PHOTO).decode()}"]
    assert "what is this?" in user_texts(model_server.requests[0])
    saved = list((settings.workspace / "media").iterdir())
    assert [p.read_bytes() for p in saved] == [PHOTO]


async def test_a_photo_for_a_model_without_vision_is_answered_with_a_notice(
    bot: Bot, model_server: ScriptedModelServer
) -> None:
    live = bot.runtime.settings
    live.model = replaced(live.model, vision=False)
    model_server.script(Reply.text("I cannot tell."))
    bot.fake.user_sends_photo(PHOTO, caption="what is this?")

    (answer,) = await bot.fake.wait_for_messages(ALICE)
    assert visible(answer).startswith("I cannot tell.")
    assert "cannot see images" in visible(answer)
    assert "[image attached: image/jpeg]" in user_texts(model_server.requests[0])


async def test_an_answer_without_text_says_why_and_offers_a_retry(
    bot: Bot, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text(""))
    bot.fake.user_says("tell me a joke")

    (answer,) = await bot.fake.wait_for_messages(ALICE)
    assert visible(answer) == (
        "The model ended its turn without writing an answer. Send your message again to retry."
    )


async def test_a_document_is_saved_and_described_to_the_model(
    bot: Bot, model_server: ScriptedModelServer, settings: Settings
) -> None:
    model_server.script(Reply.text("Got your notes."))
    bot.fake.user_sends_document(b"meeting at 10", "notes.txt", "text/plain")

    assert await bot.fake.wait_for_messages(ALICE) == ["Got your notes."]
    note = user_texts(model_server.requests[0])
    (saved,) = (settings.workspace / "media").iterdir()
    assert saved.read_bytes() == b"meeting at 10"
    assert f"media/{saved.name}" in note and "notes.txt" in note


async def test_an_outage_loses_and_repeats_nothing(
    bot: Bot, model_server: ScriptedModelServer
) -> None:
    model_server.responder = lambda body: Reply.text(f"answer {len(model_server.requests)}")
    bot.fake.user_says("before the outage")
    await bot.fake.wait_for_messages(ALICE, 1)

    await bot.fake.stop()
    bot.fake.user_says("sent during the outage")
    bot.fake.user_says("also sent during the outage")
    await bot.fake.wait_until(lambda: "reconnecting" in str(bot.state()["connection"]))
    await bot.fake.start()

    messages = await bot.fake.wait_for_messages(ALICE, 3)
    assert messages == ["answer 1", "answer 2", "answer 3"]
    asked = [user_texts(r) for r in model_server.requests]
    assert len(asked) == 3
    assert "during the outage" in asked[1] and "also sent during the outage" in asked[2]
    assert bot.state()["state"] == "running" and bot.state()["connection"] == "ok"


async def test_a_restart_does_not_handle_an_update_twice(
    settings: Settings, fake_telegram: FakeTelegram, model_server: ScriptedModelServer
) -> None:
    use_fake_telegram(settings, fake_telegram)
    model_server.responder = lambda body: Reply.text(f"answer {len(model_server.requests)}")
    async with running_bot(settings, fake_telegram):
        handled = fake_telegram.user_says("handled before the crash")
        await fake_telegram.wait_for_messages(ALICE, 1)
    # As if the daemon died before Telegram heard that the update was handled.
    fake_telegram.forget_confirmations(handled)
    fake_telegram.user_says("new after the restart")

    async with running_bot(settings, fake_telegram):
        await fake_telegram.wait_for_messages(ALICE, 2)

    assert fake_telegram.chat_messages(ALICE) == ["answer 1", "answer 2"]
    asked = [user_texts(r) for r in model_server.requests]
    assert len(asked) == 2 and "new after the restart" in asked[1]
