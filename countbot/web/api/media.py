"""Files the web UI uploads to go with a message: a recording from the microphone button or a
document (PDF, DOCX, XLSX, PPTX, HTML, text). Saved under `<workspace>/media/` like a file sent on
a channel; the answer names where (`file`), and the message names that file among its
`attachments`: the daemon reads it then (`channels.kit.media.MediaFolder.read_saved`), so what
it says becomes a part of the message with its own author and never the owner's typed words.

The body is the file itself (`POST /api/media?name=report.pdf&kind=voice|file`), bounded by
`MEDIA_LIMIT` before it is read (`web/body_limits.py`). `GET /api/media/<name>` gives a saved
recording back (a voice note played in its bubble); nothing else is served.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import PurePath
from types import ModuleType
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Route

from countbot.authorship import OWNER, Part
from countbot.web.api.errors import ApiError, daemon_of
from countbot.web.protocol import Upload

# A ten-minute voice note or a long PDF; the transcription and document limits apply after.
MEDIA_LIMIT = 25 * 1024 * 1024
_KINDS = ("voice", "file")
# What a voice note is saved as (the browser's WebM, the platforms' OGG, M4A, MP3, WAV).
_RECORDINGS = {
    ".webm": "audio/webm",
    ".ogg": "audio/ogg",
    ".oga": "audio/ogg",
    ".opus": "audio/ogg",
    ".m4a": "audio/mp4",
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
}
_PLAYBACK_HEADERS = {
    "Cache-Control": "private",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "sandbox",
}


async def _kit() -> ModuleType:
    # The channels' media intake, imported at the first upload (a worker thread's job): an idle
    # daemon without channels never loads their pipeline.
    return await asyncio.to_thread(_import_kit)


def _import_kit() -> ModuleType:
    from countbot.channels.kit import media

    return media


async def upload(request: Request) -> JSONResponse:
    name = PurePath(request.query_params.get("name") or "upload").name[:120] or "upload"
    kind = request.query_params.get("kind", "file")
    if kind not in _KINDS:
        raise ApiError(400, f"'kind' must be one of {', '.join(_KINDS)}")
    data = await request.body()
    if not data:
        raise ApiError(400, "the upload is empty")
    runtime = daemon_of(request).runtime
    folder = (await _kit()).MediaFolder(runtime.settings.workspace, runtime.media)
    saved = await folder.save(f"web-{name}", data)
    return JSONResponse({"name": name, "file": folder.shown(saved), "kind": kind})


async def download(request: Request) -> FileResponse:
    """A saved recording, to play: only audio, never run as a page (a received HTML file
    served from the UI's origin could script it)."""
    name = request.path_params["name"]
    media_type = _RECORDINGS.get(PurePath(name).suffix.lower())
    path = daemon_of(request).runtime.settings.workspace / "media" / PurePath(name).name
    if PurePath(name).name != name or media_type is None:
        raise ApiError(404, f"no received recording {name!r}")
    if not await asyncio.to_thread(path.is_file):
        raise ApiError(404, f"no received recording {name!r}")
    return FileResponse(path, media_type=media_type, headers=_PLAYBACK_HEADERS)


async def attachment_parts(runtime: Any, attachments: Sequence[Upload]) -> tuple[Part, ...]:
    """The files a web message names, read now: the owner's voice notes are their words, a
    document's text is its own author's. Raises ValueError for a file not received before."""
    if not attachments:
        return ()
    folder = (await _kit()).MediaFolder(runtime.settings.workspace, runtime.media)
    return tuple([await folder.read_saved(a.file, a.name, a.kind, OWNER) for a in attachments])


routes = [
    Route("/media", upload, methods=["POST"]),
    Route("/media/{name}", download, methods=["GET"]),
]
