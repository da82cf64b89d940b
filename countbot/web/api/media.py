"""Files the web UI uploads to go with a message: a recording from the microphone button or a
document (PDF, DOCX, XLSX, PPTX, HTML, text). Saved under `<workspace>/media/` like a file sent on
a channel and read the same way (`channels.kit.media.take_in`); the answer's `note` is what the
UI puts into the message: a voice note's transcript or a document's text.

The body is the file itself (`POST /api/media?name=report.pdf&kind=voice|file`), bounded by
`MEDIA_LIMIT` before it is read (`web/body_limits.py`).
"""

from __future__ import annotations

import asyncio
import importlib
from pathlib import PurePath

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.web.api.errors import ApiError, daemon_of

# A ten-minute voice note or a long PDF; the transcription and document limits apply after.
MEDIA_LIMIT = 25 * 1024 * 1024
_KINDS = ("voice", "file")


async def upload(request: Request) -> JSONResponse:
    name = PurePath(request.query_params.get("name") or "upload").name[:120] or "upload"
    kind = request.query_params.get("kind", "file")
    if kind not in _KINDS:
        raise ApiError(400, f"'kind' must be one of {', '.join(_KINDS)}")
    data = await request.body()
    if not data:
        raise ApiError(400, "the upload is empty")
    runtime = daemon_of(request).runtime
    # The channels' media intake, imported at the first upload (a worker thread's job): an idle
    # daemon without channels never loads their pipeline.
    kit = await asyncio.to_thread(importlib.import_module, "countbot.channels.kit.media")
    folder = kit.MediaFolder(runtime.settings.workspace, runtime.media)
    media_type = request.headers.get("content-type", "").split(";")[0].strip()
    _, notes = await kit.take_in(
        folder, f"web-{name}", data, name=name, media_type=media_type, kind=kind
    )
    note, _ = await folder.read_notes("\n\n".join(notes))
    return JSONResponse({"name": name, "note": note})


routes = [Route("/media", upload, methods=["POST"])]
