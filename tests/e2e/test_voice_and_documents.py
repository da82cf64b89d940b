"""The microphone button and document attachments in the real UI: Chromium records from a fake
microphone playing speech made by espeak-ng, the daemon transcribes it offline, and the voice
note is the user's message (played in its bubble with its words); an attached PDF goes with the
typed question as a file chip, its text beside the words (never pasted into them), also after a
reload.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright, expect

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, WAIT_MS
from tests.e2e.ui import ChatPage
from tests.support import media_files
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon


def user_texts(request: dict) -> str:
    content = request["messages"][-1]["content"]
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)


@pytest.fixture
async def microphone_browser(tmp_path: Path) -> AsyncIterator[Browser]:
    """Chromium whose microphone plays the sentence once, then silence (the file loops)."""
    speech = media_files.converted(
        media_files.spoken_wav(),
        "-af", "adelay=300,apad=pad_dur=8", "-ar", "16000", "-ac", "1", "-c:a", "pcm_s16le",
        suffix=".wav",
    )  # fmt: skip
    wav = tmp_path / "microphone.wav"
    wav.write_bytes(speech)
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=[
                *CHROMIUM_ARGS,
                "--use-fake-ui-for-media-stream",
                "--use-fake-device-for-media-stream",
                f"--use-file-for-fake-audio-capture={wav}",
            ],
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def ui(microphone_browser: Browser, daemon: Daemon) -> AsyncIterator[ChatPage]:
    context = await microphone_browser.new_context(locale="en-US")
    context.set_default_timeout(WAIT_MS * 2)
    page = ChatPage(await context.new_page(), daemon)
    try:
        await page.open()
        yield page
        assert not page.errors, f"the page threw: {page.errors}"
    finally:
        await page.screenshot("voice_and_documents")
        await context.close()


async def test_a_spoken_message_is_transcribed_and_sent(
    ui: ChatPage, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Sunny, 21 degrees."))
    microphone = ui.by_testid("voice-button")

    await microphone.click()
    await expect(microphone).to_have_attribute("data-state", "recording")
    await ui.page.wait_for_timeout(3500)
    await microphone.click()

    mine = ui.messages("user").last
    await expect(mine).to_contain_text("what is the weather today", timeout=WAIT_MS * 3)
    await expect(mine.locator("audio")).to_have_count(1)
    await expect(ui.messages("assistant").last).to_contain_text("Sunny, 21 degrees.")
    assert user_texts(model_server.requests[0]).endswith("\nwhat is the weather today")
    assert "[Transcript of a voice note" not in await mine.inner_text()


async def test_an_attached_pdf_goes_with_the_question_as_text(
    ui: ChatPage, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    model_server.script(Reply.text("It says 42 million."))
    report = tmp_path / "q3.pdf"
    report.write_bytes(media_files.pdf(["Quarterly revenue was 42 million"]))

    await ui.by_testid("image-input").set_input_files(str(report))
    await expect(ui.by_testid("document-attachment")).to_contain_text("q3.pdf")
    await ui.send("what was the revenue?")

    await expect(ui.messages("assistant").last).to_contain_text("It says 42 million.")
    asked = user_texts(model_server.requests[0])
    assert asked.endswith("\n\nwhat was the revenue?") and "[The user sent 'q3.pdf'" in asked
    assert '<external source="document q3.pdf">\nQuarterly revenue was 42 million' in asked
    await ui.reload()
    mine = ui.messages("user").last
    await expect(mine.get_by_test_id("document-attachment")).to_contain_text("q3.pdf")
    assert await mine.locator(".message-text").inner_text() == "what was the revenue?"


async def test_a_recording_shows_its_time_and_can_be_thrown_away(
    ui: ChatPage, model_server: ScriptedModelServer
) -> None:
    microphone, timer = ui.by_testid("voice-button"), ui.by_testid("voice-timer")
    await expect(timer).to_be_hidden()
    await microphone.click()
    await expect(microphone).to_have_attribute("data-state", "recording")
    await expect(timer).to_have_text("0:01")  # it counts while the person speaks
    await ui.by_testid("voice-discard").click()
    await expect(microphone).to_have_attribute("data-state", "idle")
    await expect(timer).to_be_hidden()
    await ui.page.wait_for_timeout(1500)  # a recording sent would be transcribed by now
    await expect(ui.messages("user")).to_have_count(0)
    assert model_server.requests == []
