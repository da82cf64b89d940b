"""MEMORY.md: view and replace it (the same file the model's memory tools edit)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.web.api.errors import ApiError, daemon_of, json_object


async def get_memory(request: Request) -> JSONResponse:
    return JSONResponse({"content": await daemon_of(request).runtime.memory.read()})


async def put_memory(request: Request) -> JSONResponse:
    content = (await json_object(request)).get("content")
    if not isinstance(content, str):
        raise ApiError(400, "'content' must be a string")
    memory = daemon_of(request).runtime.memory
    await memory.write(content)
    return JSONResponse({"content": await memory.read()})


routes = [
    Route("/memory", get_memory, methods=["GET"]),
    Route("/memory", put_memory, methods=["PUT"]),
]
