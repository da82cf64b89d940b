"""Triggers: the webhook door (`POST /hooks/<name>`, outside /api: its signature is its token)
and, under /api, the triggers, their recent events and outcomes, the alarms, "run again", and
adding a webhook or switching one off.

A webhook added here is written to config.yaml (its secret, made here and shown once, to
secrets.yaml) like a change on the Settings page, read back and applied at once.
"""

from __future__ import annotations

import asyncio
import base64
import secrets
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from countbot.config.loader import ConfigError, load_settings, save_settings_patch
from countbot.config.settings import TriggersSettings
from countbot.triggers.dispatcher import find_trigger, tools_of
from countbot.triggers.feature import Triggers
from countbot.triggers.webhooks import HookRefused
from countbot.web.api.errors import ApiError, daemon_of, int_param, json_object, text_param
from countbot.web.context import DaemonContext
from countbot.web.live_settings import apply_settings


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


def routes(triggers: Triggers) -> list[BaseRoute]:
    """The /api routes of the Triggers page."""

    async def list_triggers(request: Request) -> JSONResponse:
        settings = daemon_of(request).runtime.settings.triggers
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
        Route("/triggers/hooks", add_hook, methods=["POST"]),
        Route("/triggers/hooks/{name}", switch_hook, methods=["PATCH"]),
        Route("/triggers/events", list_events, methods=["GET"]),
        Route("/triggers/events/{event_id:int}/again", run_again, methods=["POST"]),
    ]


async def add_hook(request: Request) -> JSONResponse:
    """A new webhook from `{name, scheme, prompt, deliver, tools}`; its secret, made here, is in
    the answer once (the sender needs it) and never shown again."""
    daemon = daemon_of(request)
    body = await json_object(request)
    name = str(body.get("name") or "")
    if find_trigger(daemon.runtime.settings.triggers, name) is not None:
        raise ApiError(409, f"a trigger named {name!r} exists already")
    scheme = body.get("scheme", "standard")
    secret = _new_secret(scheme)
    hook = {key: body[key] for key in ("prompt", "deliver", "tools") if key in body}
    hook.update(scheme=scheme, secret=secret)
    await _save(daemon, {"hooks": {name: hook}})
    url = f"/hooks/{name}"
    return JSONResponse({"name": name, "url": url, "scheme": scheme, "secret": secret}, 201)


async def switch_hook(request: Request) -> JSONResponse:
    """`{enabled}`: switch a webhook off (its deliveries get 404) or on again."""
    daemon = daemon_of(request)
    name = request.path_params["name"]
    if name not in daemon.runtime.settings.triggers.hooks:
        raise ApiError(404, f"no webhook named {name!r}")
    enabled = (await json_object(request)).get("enabled")
    if not isinstance(enabled, bool):
        raise ApiError(400, "'enabled' must be true or false")
    await _save(daemon, {"hooks": {name: {"enabled": enabled}}})
    return JSONResponse({"name": name, "enabled": enabled})


async def _save(daemon: DaemonContext, triggers: dict[str, Any]) -> None:
    path = daemon.runtime.settings.config_path
    if path is None:
        raise ApiError(409, "the daemon was started without a config file to save to")
    try:
        await asyncio.to_thread(save_settings_patch, path, {"triggers": triggers})
        fresh = await asyncio.to_thread(load_settings, path)
    except ConfigError as exc:
        raise ApiError(400, "; ".join(exc.problems)) from None
    await apply_settings(daemon, fresh)


def _new_secret(scheme: object) -> str:
    """A Standard Webhooks secret (`whsec_` and 32 random bytes in base64), or GitHub's kind
    (any text: 32 random bytes in hex)."""
    key = secrets.token_bytes(32)
    return key.hex() if scheme == "github" else "whsec_" + base64.b64encode(key).decode()


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
