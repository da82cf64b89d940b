"""REST routes under /api, one module per resource."""

from __future__ import annotations

from starlette.routing import BaseRoute, Mount

from countbot.web.api import (
    agents,
    approvals,
    audit,
    channel_setup,
    channels,
    cron,
    health,
    mcp,
    media,
    memory,
    sessions,
    settings,
    skills,
    subagents,
    triggers,
    usage,
)
from countbot.web.context import DaemonContext


def api_mount(daemon: DaemonContext) -> Mount:
    """All /api routes; the features' routes are bound to the part of the daemon they serve."""
    routes: list[BaseRoute] = [
        *cron.routes(daemon.scheduler.service, lambda: daemon.runtime.settings.agents.names()),
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
        *channel_setup.routes,
        *approvals.routes,
        *agents.routes,
        *subagents.routes(daemon.subagents),
        *triggers.routes(daemon.triggers),
    ]
    return Mount("/api", routes=routes)
