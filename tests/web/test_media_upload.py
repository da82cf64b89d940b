"""POST /api/media against a real daemon: a recording and a document are kept under media/ and
sent with a message as attachments (the transcript and the document's text are parts of it, not
the typed words); past the size limit it is 413 before anything is read."""

from __future__ import annotations

from typing import Any

from countbot.web.api.media import MEDIA_LIMIT
from tests.channels.scenarios import user_texts
from tests.support import media_files
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon
from tests.web.test_limits import raw_request


async def stored_users(daemon: Daemon) -> list[dict[str, Any]]:
    records = await daemon.context.runtime.sessions.messages("up")
    return [record for record in records if record["type"] == "user"]


async def send_with(daemon: Daemon, content: str, attachment: dict[str, Any]) -> None:
    client = await daemon.ws()
    frame = {"type": "message", "session_id": "up", "content": content}
    await client.send({**frame, "attachments": [attachment]})
    await client.until("done")
    await client.close()


async def test_a_recording_is_sent_as_a_voice_note_the_model_hears(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    recording = media_files.converted(media_files.spoken_wav(), "-c:a", "libopus", suffix=".webm")
    model_server.script(Reply.text("Sunny."))
    async with daemon.http() as http:
        response = await http.post(
            "/api/media",
            params={"name": "voice.webm", "kind": "voice"},
            content=recording,
            headers={"Content-Type": "audio/webm"},
        )
        assert response.status_code == 200
        attachment = response.json()
        await send_with(daemon, "", attachment)
        played = await http.get(f"/api/media/{attachment['file'].split('/')[-1]}")
        page = await http.post("/api/media", params={"name": "a.html"}, content=b"<script>")
        served = await http.get(f"/api/media/{page.json()['file'].split('/')[-1]}")

    assert played.content == recording and played.headers["content-type"] == "audio/webm"
    assert served.status_code == 404  # a received page is never served from the UI's origin
    asked = user_texts(model_server.requests[0])
    assert "[Transcript of a voice note" in asked and "what is the weather today" in asked
    [user] = [
        r for r in await daemon.context.runtime.sessions.messages("up") if r["type"] == "user"
    ]
    assert user["content"] == "" and user["parts"][0]["text"] == "what is the weather today"
    assert (await daemon.context.runtime.sessions.get("up")).title == "what is the weather today"


async def test_a_document_goes_with_the_message_as_its_own_part(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    sheet = media_files.xlsx([["city", "trips"], ["Lisbon", 3]])
    model_server.script(Reply.text("Three trips."))
    async with daemon.http() as http:
        response = await http.post("/api/media", params={"name": "trips.xlsx"}, content=sheet)
        await send_with(daemon, "How many trips?", response.json())

    assert "| Lisbon | 3 |" in user_texts(model_server.requests[0])
    [user] = [
        r for r in await daemon.context.runtime.sessions.messages("up") if r["type"] == "user"
    ]
    assert user["content"] == "How many trips?"
    assert "| Lisbon | 3 |" in user["parts"][0]["text"]
    assert (await daemon.context.runtime.sessions.get("up")).title == "How many trips?"


async def test_an_upload_past_the_limit_is_refused_unread(daemon: Daemon) -> None:
    head = (
        b"POST /api/media?name=huge.pdf HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + f"Content-Length: {MEDIA_LIMIT + 1}\r\n\r\n".encode()
    )

    answer = await raw_request(daemon.port, head)

    assert answer.startswith(b"HTTP/1.1 413"), answer[:80]
    assert not (daemon.settings.workspace / "media").exists()
