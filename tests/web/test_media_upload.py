"""POST /api/media against a real daemon: a recording comes back as its transcript, a document
as its text, both kept under media/; past the size limit it is 413 before anything is read."""

from __future__ import annotations

from countbot.web.api.media import MEDIA_LIMIT
from tests.support import media_files
from tests.web.conftest import Daemon
from tests.web.test_limits import raw_request


async def test_a_recording_comes_back_as_a_transcript_note(daemon: Daemon) -> None:
    async with daemon.http() as http:
        response = await http.post(
            "/api/media",
            params={"name": "voice.webm", "kind": "voice"},
            content=media_files.converted(
                media_files.spoken_wav(), "-c:a", "libopus", suffix=".webm"
            ),
            headers={"Content-Type": "audio/webm"},
        )

    assert response.status_code == 200
    note = response.json()["note"]
    assert note.startswith("[Transcript of the user's voice note")
    assert note.endswith("\nwhat is the weather today")
    (saved,) = (daemon.settings.workspace / "media").iterdir()
    assert saved.name.endswith("web-voice.webm")


async def test_a_document_comes_back_as_its_text(daemon: Daemon) -> None:
    sheet = media_files.xlsx([["city", "trips"], ["Lisbon", 3]])
    async with daemon.http() as http:
        response = await http.post("/api/media", params={"name": "trips.xlsx"}, content=sheet)

    assert response.status_code == 200
    assert "| Lisbon | 3 |" in response.json()["note"]


async def test_an_upload_past_the_limit_is_refused_unread(daemon: Daemon) -> None:
    head = (
        b"POST /api/media?name=huge.pdf HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + f"Content-Length: {MEDIA_LIMIT + 1}\r\n\r\n".encode()
    )

    answer = await raw_request(daemon.port, head)

    assert answer.startswith(b"HTTP/1.1 413"), answer[:80]
    assert not (daemon.settings.workspace / "media").exists()
