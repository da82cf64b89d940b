"""GET /api/agents: the agents of this daemon (`agents:` in config.yaml), `main` first, each with
whether it can answer now and why not; the web UI's agent switcher lists them."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.web.api.errors import daemon_of


async def list_agents(request: Request) -> JSONResponse:
    houses = daemon_of(request).houses
    agents = [{"name": name, "unavailable": houses.unavailable(name)} for name in houses.names]
    return JSONResponse({"agents": agents, "default": houses.main.settings.agents.default})


routes = [Route("/agents", list_agents, methods=["GET"])]
