"""Subagents: list them (all, one session's, or only the running ones) and cancel one.

The routes get only the subagent manager (`routes(manager)`), not the whole daemon.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from countbot.subagents.manager import SubagentManager
from countbot.subagents.store import SubagentRecord
from countbot.web.api.errors import ApiError, text_param

# Where a subagent reports to, and whether it did: the manager's business, not the page's.
_UNSHOWN = frozenset({"channel", "chat_id", "reported"})


def subagent_json(record: SubagentRecord) -> dict[str, Any]:
    return {k: v for k, v in dataclasses.asdict(record).items() if k not in _UNSHOWN}


def routes(manager: SubagentManager) -> list[BaseRoute]:
    """The routes, bound to the daemon's subagent manager (all they use of it)."""

    async def list_subagents(request: Request) -> JSONResponse:
        """`?session=` one parent's; `?active=1` only queued and running ones."""
        found = await manager.list(
            parent_session=text_param(request, "session"),
            active_only=request.query_params.get("active") in {"1", "true"},
        )
        return JSONResponse({"subagents": [subagent_json(record) for record in found]})

    async def cancel_subagent(request: Request) -> JSONResponse:
        subagent_id = request.path_params["subagent_id"]
        if await manager.cancel(subagent_id):
            record = await manager.get(subagent_id)
            assert record is not None
            return JSONResponse(subagent_json(record), 202)
        record = await manager.get(subagent_id)
        if record is None:
            raise ApiError(404, f"no subagent {subagent_id!r}")
        raise ApiError(409, f"subagent {subagent_id} already ended ({record.status})")

    return [
        Route("/subagents", list_subagents, methods=["GET"]),
        Route("/subagents/{subagent_id}/cancel", cancel_subagent, methods=["POST"]),
    ]
