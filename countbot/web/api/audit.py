"""GET /api/audit: recent tool calls, newest first, filtered by tool, status and session."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.web.api.errors import daemon_of, int_param, text_param

FIELDS = ("ts", "session_id", "name", "arguments", "result", "status", "duration_ms", "channel")


async def audit(request: Request) -> JSONResponse:
    calls = await daemon_of(request).runtime.tool_calls.query(
        session_id=text_param(request, "session_id"),
        name=text_param(request, "tool"),
        status=text_param(request, "status"),
        limit=int_param(request, "limit", 100, low=1, high=500),
    )
    return JSONResponse({"entries": [{key: call.get(key) for key in FIELDS} for call in calls]})


routes = [Route("/audit", audit, methods=["GET"])]
