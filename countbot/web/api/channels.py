"""GET /api/channels: the chat channels and their state (none are wired into the daemon yet)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


async def channels(request: Request) -> JSONResponse:
    return JSONResponse({"channels": []})


routes = [Route("/channels", channels, methods=["GET"])]
