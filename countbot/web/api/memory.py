"""MEMORY.md: view and replace it (the same file the model's memory tools edit).

The assistant (or a person with an editor) may change the file while the page is open, so every
read carries a version (also as the ETag) and a save with `If-Match` replaces only the version
it was based on; otherwise it is refused with 409 and the current text, and nothing is lost.
"""

from __future__ import annotations

import hashlib

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.web.api.errors import ApiError, daemon_of, json_object


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


routes = [
    Route("/memory", get_memory, methods=["GET"]),
    Route("/memory", put_memory, methods=["PUT"]),
]
