"""A QQ voice note (a OneBot `record`, SILK like QQ's own) reaches the model as a transcript."""

from __future__ import annotations

from countbot.config.settings import Settings
from tests.channels.fake_onebot import FakeQQClient
from tests.channels.harness import ALICE, Bot
from tests.channels.scenarios import user_texts
from tests.support import media_files
from tests.support.scripted_model import Reply, ScriptedModelServer

ME = f"private:{ALICE}"


async def test_a_silk_voice_note_reaches_the_model_as_a_transcript(
    bot: Bot, fake_qq: FakeQQClient, model_server: ScriptedModelServer, settings: Settings
) -> None:
    model_server.script(Reply.text("Rain later."))
    await fake_qq.user_says("", user=ALICE, record=media_files.silk())

    heard, answer = await fake_qq.wait_for_messages(ME, 2)
    assert (heard, answer) == ("🎤 “what is the weather today”", "Rain later.")
    asked = user_texts(model_server.requests[0])
    assert "[Transcript of a voice note" in asked
    assert asked.endswith("\nwhat is the weather today")
    (saved,) = (settings.workspace / "media").iterdir()
    assert saved.read_bytes().startswith(b"\x02#!SILK_V3")
