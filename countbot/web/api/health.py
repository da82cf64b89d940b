"""GET /api/health: is the daemon up, and can it talk to a model yet. GET /api/capabilities:
what this install can do (model, memory by meaning, documents, voice, sandbox), and how to turn
on what it cannot."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot import __version__
from countbot.runtime.capabilities import capabilities
from countbot.web.api.errors import daemon_of


async def health(request: Request) -> JSONResponse:
    daemon = daemon_of(request)
    return JSONResponse(
        {
            "status": "ok" if daemon.gateway.accepting else "stopping",
            "version": __version__,  # not importlib.metadata: its import, and a scan per call
            "model_ready": daemon.model_ready,
            "model_configured": daemon.model_configured,
            "offline_default": daemon.offline_default,
        }
    )


async def capabilities_now(request: Request) -> JSONResponse:
    runtime = daemon_of(request).runtime
    found = await asyncio.to_thread(capabilities, runtime.settings, runtime.sandbox.status)
    return JSONResponse({"capabilities": [capability.as_dict() for capability in found]})


routes = [
    Route("/health", health, methods=["GET"]),
    Route("/capabilities", capabilities_now, methods=["GET"]),
]
