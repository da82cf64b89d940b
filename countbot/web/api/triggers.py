"""Triggers: the webhook door (`POST /hooks/<name>`, outside /api: its signature is its token)
and, under /api, the triggers, their recent events and outcomes, the alarms, and "run again".

The routes get only the running `Triggers`, not the whole daemon.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from countbot.config.settings import TriggersSettings
from countbot.triggers.dispatcher import tools_of
from countbot.triggers.feature import Triggers
from countbot.triggers.webhooks import HookRefused
from countbot.web.api.errors import ApiError, int_param, text_param


def hook_routes(triggers: Triggers) -> list[BaseRoute]:
    """`POST /hooks/<name>`: 202 once the delivery is recorded, 200 for a repeated one."""

    async def deliver(request: Request) -> JSONResponse:
        name = request.path_params["name"]
        try:
            triggers.hooks.hook(name)  # an unknown hook is refused before its body is read
            body = await request.body()
            accepted = await triggers.hooks.accept(name, request.headers, body)
        except HookRefused as exc:
            return JSONResponse({"error": str(exc)}, exc.status)
        status = 200 if accepted.duplicate else 202
        return JSONResponse({"event": accepted.event_id, "duplicate": accepted.duplicate}, status)

    return [Route("/{name}", deliver, methods=["POST"])]


def routes(triggers: Triggers, settings: TriggersSettings) -> list[BaseRoute]:
    """The /api routes of the Triggers page."""

    async def list_triggers(request: Request) -> JSONResponse:
        alarms = [
            {"event": a.event_id, "trigger": a.trigger, "waiting": round(a.waiting)}
            for a in triggers.dispatcher.alarms()
        ]
        return JSONResponse({"triggers": _configured(settings), "alarms": alarms})

    async def list_events(request: Request) -> JSONResponse:
        limit = int_param(request, "limit", 50, low=1, high=500)
        found = await triggers.events.recent(text_param(request, "trigger"), limit)
        return JSONResponse({"events": [event.shown() for event in found]})

    async def run_again(request: Request) -> JSONResponse:
        event = await triggers.dispatcher.again(int(request.path_params["event_id"]))
        if event is None:
            raise ApiError(404, f"no trigger event {request.path_params['event_id']}")
        return JSONResponse(event.shown(), 202)

    return [
        Route("/triggers", list_triggers, methods=["GET"]),
        Route("/triggers/events", list_events, methods=["GET"]),
        Route("/triggers/events/{event_id:int}/again", run_again, methods=["POST"]),
    ]


def _configured(settings: TriggersSettings) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for kind, section in (
        ("hook", settings.hooks),
        ("folder", settings.folders),
        ("mailbox", settings.mailboxes),
    ):
        for name, trigger in section.items():
            found.append(
                {
                    "name": name,
                    "kind": kind,
                    "enabled": trigger.enabled,
                    "prompt": trigger.prompt,
                    "deliver": trigger.deliver,
                    "tools": sorted(tools_of(trigger)),
                }
            )
    return found
