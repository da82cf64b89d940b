"""GET /api/channels: the chat channels and their state (secrets masked)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


async def channels(request: Request) -> JSONResponse:
    return JSONResponse({"channels": request.app.state.daemon.channels.states()})


routes = [Route("/channels", channels, methods=["GET"])]
