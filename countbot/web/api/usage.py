"""GET /api/usage: tokens and cost by day, by session and by purpose (answers, summaries, the
memory flush), recorded by the runtime per request."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.runtime.budget import budget_report
from countbot.store.counters import DailyCounters
from countbot.web.api.errors import daemon_of, int_param


async def usage_report(request: Request) -> JSONResponse:
    runtime = daemon_of(request).runtime
    log = runtime.usage
    days = int_param(request, "days", 30, low=1, high=3660)
    by_session = await log.by_session(limit=int_param(request, "limit", 50, low=1, high=500))
    by_session.sort(key=lambda row: row["cost_usd"] or 0, reverse=True)
    return JSONResponse(
        {
            "by_day": await log.by_day(days),
            "by_session": by_session,
            "by_purpose": await log.by_purpose(days),
            "totals": await log.totals(),
            "today": await budget_report(runtime.settings.budget, log, DailyCounters(runtime.db)),
        }
    )


routes = [Route("/usage", usage_report, methods=["GET"])]
