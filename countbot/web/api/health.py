"""GET /api/health: is the daemon up, and can it talk to a model yet."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot import __version__
from countbot.web.api.errors import daemon_of


async def health(request: Request) -> JSONResponse:
    daemon = daemon_of(request)
    return JSONResponse(
        {
            "status": "ok" if daemon.gateway.accepting else "stopping",
            "version": __version__,  # not importlib.metadata: 1.7 MB, and a scan per call
            "model_ready": daemon.model_ready,
            "model_configured": daemon.model_configured,
            "offline_default": daemon.offline_default,
        }
    )


routes = [Route("/health", health, methods=["GET"])]
