"""/api/approvals: the questions waiting for an answer, and the "Always allow" list.

GET lists both (a page that reloads, or any client, can see what is open); POST /approvals/{id}
answers a question like the WebSocket frame does; DELETE /approvals/allowed revokes a rule (of
`agent`, `main` unless named: each agent has its own rules).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.config.settings import MAIN
from countbot.runtime.approvals import DECISIONS, ApprovalBroker
from countbot.web.api.errors import ApiError, daemon_of, json_object, text_param


def _broker(request: Request) -> ApprovalBroker:
    approvals = daemon_of(request).gateway.approvals
    if approvals is None:
        raise ApiError(503, "approvals are not available in this daemon")
    return approvals


async def list_approvals(request: Request) -> JSONResponse:
    broker = _broker(request)
    session_id = text_param(request, "session_id")
    pending = [
        {**p.asked.to_dict(), "session_id": p.address.session_id}
        for p in broker.pending(session_id)
    ]
    return JSONResponse({"pending": pending, "allowed": await broker.rules.list()})


async def answer(request: Request) -> JSONResponse:
    body = await json_object(request)
    decision = body.get("decision")
    if decision not in DECISIONS:
        raise ApiError(400, f"'decision' must be one of {', '.join(DECISIONS)}")
    approval_id = request.path_params["approval_id"]
    if not _broker(request).answer(approval_id, decision, "web"):
        raise ApiError(404, f"no open question {approval_id!r} (answered, expired or cancelled)")
    return JSONResponse({"id": approval_id, "decision": decision})


async def revoke(request: Request) -> JSONResponse:
    body = await json_object(request)
    tool, key, agent = body.get("tool"), body.get("key"), body.get("agent", MAIN)
    if not isinstance(tool, str) or not isinstance(key, str) or not isinstance(agent, str):
        raise ApiError(400, "send the rule as {'tool': ..., 'key': ..., 'agent': ...}")
    if not await _broker(request).rules.revoke(agent, tool, key):
        raise ApiError(404, "no such rule")
    return JSONResponse({"revoked": {"agent": agent, "tool": tool, "key": key}})


routes = [
    Route("/approvals", list_approvals, methods=["GET"]),
    Route("/approvals/allowed", revoke, methods=["DELETE"]),
    Route("/approvals/{approval_id}", answer, methods=["POST"]),
]
