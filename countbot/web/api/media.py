"""Files the web UI uploads to go with a message: a recording from the microphone button or a
document (PDF, DOCX, XLSX, PPTX, HTML, text). Saved under `<workspace>/media/` of the agent the
message goes to (`agent=`, `main` unless named) like a file sent on a channel, where no other
agent's tools can read it; the answer names where (`file`), and the message names that file
among its `attachments`: the daemon reads it then (`channels.kit.media.MediaFolder.read_saved`),
so what it says becomes a part of the message with its own author, never the owner's words.

The body is the file itself (`POST /api/media?name=report.pdf&kind=voice|file&agent=NAME`),
bounded by `MEDIA_LIMIT` before it is read (`web/body_limits.py`). `GET /api/media/<name>?agent=`
gives a saved recording back (a voice note played in its bubble); nothing else is served.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path, PurePath
from types import ModuleType
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Route

from countbot.common.authorship import OWNER, Part
from countbot.config.agent_view import agent_workspace
from countbot.config.settings import MAIN
from countbot.web.api.errors import ApiError, daemon_of, text_param
from countbot.web.protocol import Upload

if TYPE_CHECKING:
    from countbot.channels.kit.media import MediaFolder
    from countbot.web.context import DaemonContext

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
    folder = await _folder(daemon_of(request), _agent(request))
    saved = await folder.save(f"web-{name}", data)
    return JSONResponse({"name": name, "file": folder.shown(saved), "kind": kind})


async def download(request: Request) -> FileResponse:
    """A saved recording, to play: only audio, never run as a page (a received HTML file
    served from the UI's origin could script it)."""
    name = request.path_params["name"]
    media_type = _RECORDINGS.get(PurePath(name).suffix.lower())
    workspace = _workspace(daemon_of(request), _agent(request))
    path = workspace / "media" / PurePath(name).name
    if PurePath(name).name != name or media_type is None:
        raise ApiError(404, f"no received recording {name!r}")
    if not await asyncio.to_thread(path.is_file):
        raise ApiError(404, f"no received recording {name!r}")
    return FileResponse(path, media_type=media_type, headers=_PLAYBACK_HEADERS)


async def attachment_parts(
    daemon: DaemonContext, agent: str, attachments: Sequence[Upload]
) -> tuple[Part, ...]:
    """The files a web message to `agent` names, read now from that agent's workspace: the
    owner's voice notes are their words, a document's text is its own author's. Raises
    ValueError for a file not received before."""
    if not attachments:
        return ()
    folder = await _folder(daemon, agent)
    return tuple([await folder.read_saved(a.file, a.name, a.kind, OWNER) for a in attachments])


def _agent(request: Request) -> str:
    agent = text_param(request, "agent") or MAIN
    if agent not in daemon_of(request).runtime.settings.agents.names():
        raise ApiError(404, f"no assistant {agent!r}")
    return agent


def _workspace(daemon: DaemonContext, agent: str) -> Path:
    return agent_workspace(daemon.runtime.settings, agent)


async def _folder(daemon: DaemonContext, agent: str) -> MediaFolder:
    """Agent `agent`'s media folder: its own workspace's `media/`."""
    kit = await _kit()
    folder: MediaFolder = kit.MediaFolder(_workspace(daemon, agent), daemon.runtime.media)
    return folder


routes = [
    Route("/media", upload, methods=["POST"]),
    Route("/media/{name}", download, methods=["GET"]),
]
