"""GET /api/usage: tokens and cost by day, by session, by agent and by purpose (answers,
summaries, the memory flush), recorded by the runtime per request; today's spend against the
budget, and against each agent's own budget (`agents.others.<name>.budget`)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.runtime.budget import budget_report
from countbot.store.counters import DailyCounters
from countbot.web.api.errors import daemon_of, int_param


async def usage_report(request: Request) -> JSONResponse:
    runtime = daemon_of(request).runtime
    settings, log, counters = runtime.settings, runtime.usage, DailyCounters(runtime.db)
    days = int_param(request, "days", 30, low=1, high=3660)
    by_session = await log.by_session(limit=int_param(request, "limit", 50, low=1, high=500))
    by_session.sort(key=lambda row: row["cost_usd"] or 0, reverse=True)
    return JSONResponse(
        {
            "by_day": await log.by_day(days),
            "by_session": by_session,
            "by_purpose": await log.by_purpose(days),
            "by_agent": await log.by_agent(days),
            "totals": await log.totals(),
            "today": await budget_report(settings.budget, log, counters),
            "agents_today": {
                name: await budget_report(entry.budget, log, counters, agent=name)
                for name, entry in settings.agents.others.items()
                if entry.budget is not None
            },
        }
    )


routes = [Route("/usage", usage_report, methods=["GET"])]
