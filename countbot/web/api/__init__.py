"""REST routes under /api, one module per resource."""

from __future__ import annotations

from starlette.routing import BaseRoute, Mount

from countbot.web.api import (
    approvals,
    audit,
    channels,
    health,
    mcp,
    media,
    memory,
    sessions,
    settings,
    skills,
    subagents,
    usage,
)


def api_mount(extra: list[BaseRoute]) -> Mount:
    """All /api routes; `extra` are those other surfaces serve (the scheduler's /api/cron)."""
    routes: list[BaseRoute] = [
        *extra,
        *health.routes,
        *sessions.routes,
        *settings.routes,
        *memory.routes,
        *media.routes,
        *skills.routes,
        *mcp.routes,
        *audit.routes,
        *usage.routes,
        *channels.routes,
        *approvals.routes,
        *subagents.routes,
    ]
    return Mount("/api", routes=routes)
