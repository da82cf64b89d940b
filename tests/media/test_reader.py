"""`MediaReader` on real files: speech made by espeak-ng in the formats platforms send, through
the offline recognizer (a pocketsphinx child) and a fake transcription endpoint on loopback; PDF,
DOCX and XLSX files made here, through markitdown in a child.
"""

from __future__ import annotations

import pytest

from countbot.config.settings import TranscriptionSettings
from countbot.media.reader import INLINE_CHARS, MediaReader
from tests.support import media_files
from tests.support.fake_transcriber import FakeTranscriber
from tests.support.loop_watch import RESPONSIVE, LoopWatch

SAVED: list[str] = []


async def save(text: str) -> str:
    SAVED.append(text)
    return "media/whole-text.md"


async def read(reader: MediaReader, data: bytes, name: str, kind: str = "file") -> str:
    reading = await reader.read(
        data, name=name, media_type="", kind=kind, where=f"media/{name}", save=save
    )
    assert reading is not None, f"{name} was not recognised as a voice note or a document"
    return f"{reading.note}\n{reading.text}"


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("voice.ogg", media_files.ogg_opus),
        ("voice.silk", media_files.silk),
        ("audio.m4a", lambda: media_files.converted(media_files.spoken_wav(), suffix=".m4a")),
        ("clip.wav", media_files.spoken_wav),
    ],
)
async def test_the_offline_recognizer_hears_every_format_platforms_send(name, make) -> None:
    note = await read(MediaReader(TranscriptionSettings()), make(), name)

    assert note.endswith("\nwhat is the weather today")
    assert note.startswith("[Transcript of a voice note (2 s, by the offline recognizer")
    assert f"media/{name}" in note


async def test_an_audio_file_without_a_name_or_type_is_still_heard() -> None:
    reader = MediaReader(TranscriptionSettings())
    reading = await reader.read(
        media_files.ogg_opus(), name="file-0", media_type="", kind="file", where="m", save=save
    )

    assert reading is not None and reading.transcript == "what is the weather today"


async def test_a_configured_endpoint_gets_a_wav_and_its_text_is_the_transcript(
    transcriber: FakeTranscriber,
) -> None:
    settings = TranscriptionSettings(
        api_base=transcriber.api_base, api_key="sk-voice-test", model="whisper-large-v3"
    )

    note = await read(MediaReader(settings), media_files.ogg_opus(), "voice.ogg", "voice")

    assert note.endswith("\nbook a table for two at eight")
    assert "by whisper-large-v3" in note
    (received,) = transcriber.received
    assert received.fields["model"] == "whisper-large-v3"
    assert received.authorization == "Bearer sk-voice-test"
    assert 1.5 < received.seconds() < 3


async def test_an_endpoint_that_fails_gives_a_note_that_says_so(
    transcriber: FakeTranscriber,
) -> None:
    transcriber.status = 503
    settings = TranscriptionSettings(api_base=transcriber.api_base)

    note = await read(MediaReader(settings), media_files.ogg_opus(), "voice.ogg", "voice")

    assert "could not be transcribed: the transcription service answered 503" in note
    assert "You cannot hear it" in note


async def test_a_voice_note_past_the_duration_limit_is_refused_with_the_limit() -> None:
    settings = TranscriptionSettings(max_seconds=5)

    note = await read(MediaReader(settings), media_files.silence_wav(8), "long.wav", "voice")

    assert "could not be transcribed: it is longer than the 5 s that can be transcribed" in note


async def test_a_voice_note_past_the_size_limit_is_refused_before_decoding() -> None:
    settings = TranscriptionSettings(max_bytes=1000)

    note = await read(MediaReader(settings), media_files.ogg_opus(), "voice.ogg", "voice")

    assert "it is larger than the 1,000 bytes a voice note may have" in note


async def test_a_file_that_only_claims_to_be_audio_is_not_transcribed() -> None:
    note = await read(MediaReader(TranscriptionSettings()), b"not sound at all" * 50, "v.ogg")

    assert "could not be transcribed: it is not audio ffmpeg can read" in note


async def test_a_pdf_docx_and_xlsx_enter_the_turn_as_their_text() -> None:
    reader = MediaReader(TranscriptionSettings())

    pdf = await read(reader, media_files.pdf(["Quarterly revenue was 42 million"]), "q3.pdf")
    doc = await read(reader, media_files.docx(["The offsite is on Tuesday"]), "plan.docx")
    sheet = await read(reader, media_files.xlsx([["fruit", "boxes"], ["apples", 7]]), "s.xlsx")

    assert "Quarterly revenue was 42 million" in pdf and pdf.startswith("[The user sent 'q3.pdf'")
    assert "The offsite is on Tuesday" in doc
    assert "| apples | 7 |" in sheet


async def test_a_scanned_pdf_says_it_has_no_text_layer() -> None:
    note = await read(MediaReader(TranscriptionSettings()), media_files.scanned_pdf(), "scan.pdf")

    assert "it has no text layer" in note


async def test_a_long_document_enters_in_part_and_its_whole_text_is_kept() -> None:
    SAVED.clear()
    pages = [f"Page {n} says " + "lorem ipsum " * 200 for n in range(1, 30)]

    note = await read(MediaReader(TranscriptionSettings()), media_files.pdf(pages), "long.pdf")

    assert f"the first {INLINE_CHARS:,} of" in note and "media/whole-text.md" in note
    assert len(note) < INLINE_CHARS + 1000
    assert "Page 29 says" in SAVED[0]


async def test_a_broken_document_gives_a_reason_not_a_crash() -> None:
    note = await read(MediaReader(TranscriptionSettings()), b"PK\x03\x04 broken zip", "x.docx")

    assert note.startswith("[The user sent 'x.docx' (media/x.docx), but it cannot be read:")


async def test_other_files_are_left_to_the_file_tools() -> None:
    reading = await MediaReader(TranscriptionSettings()).read(
        b"\x00\x01binary", name="tool.bin", media_type="", kind="file", where="m", save=save
    )

    assert reading is None


async def test_the_event_loop_stays_responsive_while_media_is_read() -> None:
    reader = MediaReader(TranscriptionSettings())
    voice = media_files.ogg_opus("what is the weather today " * 4)
    pages = media_files.pdf([f"Page {n} of the report" for n in range(30)])

    async with LoopWatch() as watch:
        heard = await read(reader, voice, "voice.ogg", "voice")
        text = await read(reader, pages, "report.pdf")

    assert "weather" in heard and "Page 29 of the report" in text
    assert watch.worst < RESPONSIVE, f"the loop stalled {watch.worst:.2f} s"
