"""MCP servers: each configured server's state, tools, skipped tools and last error."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.web.api.errors import daemon_of


async def list_servers(request: Request) -> JSONResponse:
    return JSONResponse({"servers": daemon_of(request).runtime.mcp_status()})


routes = [Route("/mcp", list_servers, methods=["GET"])]
