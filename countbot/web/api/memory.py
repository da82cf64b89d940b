"""MEMORY.md: view and replace it (the same file the model's memory tools edit); search memory.

The assistant (or a person with an editor) may change the file while the page is open, so every
read carries a version (also as the ETag) and a save with `If-Match` replaces only the version
it was based on; otherwise it is refused with 409 and the current text, and nothing is lost.
"""

from __future__ import annotations

import hashlib
from datetime import date

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.memory.cited import SCOPES
from countbot.web.api.errors import ApiError, daemon_of, int_param, json_object, text_param


def version_of(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()[:20]


def _shown(content: str, status: int = 200, **extra: str) -> JSONResponse:
    version = version_of(content)
    body = {"content": content, "version": version, **extra}
    return JSONResponse(body, status, headers={"ETag": f'"{version}"'})


async def get_memory(request: Request) -> JSONResponse:
    return _shown(await daemon_of(request).runtime.memory.read())


class _Conflict(Exception):
    def __init__(self, current: str) -> None:
        self.current = current


async def put_memory(request: Request) -> JSONResponse:
    content = (await json_object(request)).get("content")
    if not isinstance(content, str):
        raise ApiError(400, "'content' must be a string")
    expected = request.headers.get("if-match", "").strip().removeprefix("W/").strip('"')
    memory = daemon_of(request).runtime.memory

    def replace(current: str) -> str:
        # Compared under the file's locks, so no write can slip in between check and save.
        if expected and expected != "*" and version_of(current) != expected:
            raise _Conflict(current)
        return content

    try:
        await memory.update(replace)
    except _Conflict as conflict:
        error = "memory changed since you loaded it; compare and save again"
        return _shown(conflict.current, 409, error=error)
    return _shown(await memory.read())


async def search_memory(request: Request) -> JSONResponse:
    """The memory index's hits for `q` (notes and past conversations), each with its citation."""
    query = (text_param(request, "q") or "").strip()
    if not query:
        raise ApiError(400, "'q' (what to search for) is required")
    scope = text_param(request, "scope") or "all"
    if scope not in SCOPES:
        raise ApiError(400, "'scope' must be all, notes or conversations")
    hits = await daemon_of(request).runtime.memory_index.search(
        query,
        limit=int_param(request, "limit", 20, low=1, high=100),
        kinds=SCOPES[scope],
        since=_date_param(request, "since"),
        until=_date_param(request, "until"),
    )
    return JSONResponse({"query": query, "hits": [hit.as_dict() for hit in hits]})


async def get_recalls(request: Request) -> JSONResponse:
    """What auto-recall put into recent turns (of one session with `session_id`), newest first."""
    index = daemon_of(request).runtime.memory_index
    limit = int_param(request, "limit", 20, low=1, high=200)
    return JSONResponse({"recalls": await index.recalls(text_param(request, "session_id"), limit)})


async def index_status(request: Request) -> JSONResponse:
    return JSONResponse(await daemon_of(request).runtime.memory_index.status())


async def rebuild_index(request: Request) -> JSONResponse:
    """Index every note and conversation again (vectors follow in the background)."""
    index = daemon_of(request).runtime.memory_index
    await index.rebuild()
    return JSONResponse(await index.status())


def _date_param(request: Request, name: str) -> date | None:
    raw = text_param(request, name)
    if raw is None:
        return None
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise ApiError(400, f"'{name}' must be a date, YYYY-MM-DD") from None


routes = [
    Route("/memory", get_memory, methods=["GET"]),
    Route("/memory", put_memory, methods=["PUT"]),
    Route("/memory/search", search_memory, methods=["GET"]),
    Route("/memory/recalls", get_recalls, methods=["GET"]),
    Route("/memory/index", index_status, methods=["GET"]),
    Route("/memory/index/rebuild", rebuild_index, methods=["POST"]),
]
