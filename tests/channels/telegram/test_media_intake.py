"""Voice notes and documents sent on Telegram reach the model as the user's words and as text:
real speech (espeak-ng, OGG/Opus like Telegram's) through the offline recognizer and through a
fake transcription endpoint; a real PDF through markitdown."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from countbot.config.settings import Settings
from tests.channels.fake_telegram import FakeTelegram, FakeUser
from tests.channels.harness import ALICE, Bot, running_bot, use_fake_telegram
from tests.channels.scenarios import user_texts
from tests.support import media_files
from tests.support.fake_transcriber import FakeTranscriber
from tests.support.scripted_model import Reply, ScriptedModelServer


async def test_a_voice_note_reaches_the_model_as_a_transcript_shown_back_to_the_user(
    bot: Bot, model_server: ScriptedModelServer, settings: Settings
) -> None:
    model_server.script(Reply.text("Sunny all day."))
    bot.fake.user_sends_voice(media_files.ogg_opus())

    messages = await bot.fake.wait_for_messages(ALICE, 2)
    assert messages == ["🎤 “what is the weather today”", "Sunny all day."]
    asked = user_texts(model_server.requests[0])
    assert "[Transcript of a voice note" in asked
    assert asked.endswith("\nwhat is the weather today")
    (saved,) = (settings.workspace / "media").iterdir()
    assert saved.read_bytes().startswith(b"OggS"), "the recording is kept"
    records = await bot.runtime.sessions.messages(f"telegram:{ALICE}")
    assert "what is the weather today" in str(records[0]), "the transcript is stored"


@pytest.fixture
async def endpoint_bot(
    settings: Settings, transcriber: FakeTranscriber, fake_telegram: FakeTelegram
) -> AsyncIterator[FakeTelegram]:
    """Telegram running with `transcription.api_base` pointed at the fake endpoint."""
    settings.transcription.api_base = transcriber.api_base
    use_fake_telegram(settings, fake_telegram)
    async with running_bot(settings, fake_telegram):
        yield fake_telegram


async def test_with_an_endpoint_configured_it_transcribes_instead(
    endpoint_bot: FakeTelegram, model_server: ScriptedModelServer, transcriber: FakeTranscriber
) -> None:
    model_server.script(Reply.text("Booked."))
    endpoint_bot.user_sends_voice(media_files.ogg_opus())

    assert (await endpoint_bot.wait_for_messages(ALICE, 2))[1] == "Booked."
    assert user_texts(model_server.requests[0]).endswith("\nbook a table for two at eight")
    assert len(transcriber.received) == 1


async def test_a_strangers_voice_note_is_never_transcribed(
    endpoint_bot: FakeTelegram, model_server: ScriptedModelServer, transcriber: FakeTranscriber
) -> None:
    endpoint_bot.user_sends_voice(media_files.ogg_opus(), user=FakeUser(666))

    (reply,) = await endpoint_bot.wait_for_messages(666)
    assert "code" in reply.lower()  # the pairing code, and nothing else
    assert transcriber.received == [] and model_server.requests == []


async def test_a_pdf_sent_with_a_question_enters_the_turn_as_text(
    bot: Bot, model_server: ScriptedModelServer, settings: Settings
) -> None:
    model_server.script(Reply.text("Revenue was 42 million."))
    report = media_files.pdf(["Quarterly revenue was 42 million", "Costs were 30 million"])
    bot.fake.user_sends_document(report, "q3.pdf", "application/pdf", caption="what was revenue?")

    assert await bot.fake.wait_for_messages(ALICE) == ["Revenue was 42 million."]
    asked = user_texts(model_server.requests[0])
    assert "what was revenue?" in asked
    assert "Quarterly revenue was 42 million" in asked and "Costs were 30 million" in asked
    (saved,) = (settings.workspace / "media").iterdir()
    assert saved.read_bytes() == report, "the original is kept"


async def test_with_speech_on_the_answer_also_arrives_as_a_voice_note(
    settings: Settings, model_server: ScriptedModelServer, fake_telegram: FakeTelegram
) -> None:
    settings.speech.enabled = True  # no endpoint: espeak-ng speaks, ffmpeg encodes
    use_fake_telegram(settings, fake_telegram)
    model_server.script(Reply.text("It will be **sunny** today."))
    async with running_bot(settings, fake_telegram):
        fake_telegram.user_says("weather?")
        assert await fake_telegram.wait_for_messages(ALICE) == ["It will be <b>sunny</b> today."]
        await fake_telegram.wait_until(lambda: bool(fake_telegram.calls_to("sendVoice")))

    (call,) = fake_telegram.calls_to("sendVoice")
    assert call.files["voice"].startswith(b"OggS")
    spoken = media_files.converted(call.files["voice"], suffix=".wav")  # a real, decodable note
    assert len(spoken) > 32_000


async def test_a_speech_endpoint_speaks_the_answer_as_plain_text(
    settings: Settings,
    model_server: ScriptedModelServer,
    transcriber: FakeTranscriber,
    fake_telegram: FakeTelegram,
) -> None:
    settings.speech.enabled = True
    settings.speech.api_base = transcriber.api_base
    use_fake_telegram(settings, fake_telegram)
    model_server.script(Reply.text("It will be **sunny** today."))
    async with running_bot(settings, fake_telegram):
        fake_telegram.user_says("weather?")
        await fake_telegram.wait_until(lambda: bool(fake_telegram.calls_to("sendVoice")))

    assert transcriber.spoken == [
        {"model": "tts-1", "voice": "alloy", "response_format": "opus",
         "input": "It will be sunny today."}
    ]  # fmt: skip
    assert fake_telegram.calls_to("sendVoice")[0].files["voice"] == transcriber.voice
