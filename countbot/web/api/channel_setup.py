"""Set a chat channel up from the browser: its fields, on/off, allowed senders; applied at once.

`PUT /api/channels/{name}` takes `{"settings": {...}}` (any field of `channels.<name>`, `enabled`
and `allow_from` included), writes it to config.yaml like the Settings page does (a token or
secret goes to secrets.yaml, the config gets a reference), reads the file back, and restarts that
one channel with the new section, so the page shows it connecting (or why it cannot) right away.
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.channels.manager import CHANNEL_TYPES
from countbot.config.loader import ConfigError, load_settings, save_settings_patch
from countbot.web.api.errors import ApiError, daemon_of, json_object


async def configure(request: Request) -> JSONResponse:
    daemon = daemon_of(request)
    name = request.path_params["name"]
    if name not in CHANNEL_TYPES:
        raise ApiError(404, f"no channel {name!r}; known: {', '.join(CHANNEL_TYPES)}")
    body = await json_object(request)
    change = body.get("settings")
    if not isinstance(change, dict) or not change:
        raise ApiError(400, "'settings' must be an object with the fields to change")
    settings = daemon.runtime.settings
    if settings.config_path is None:
        raise ApiError(409, "the daemon was started without a config file to save to")
    try:
        patch = {"channels": {name: change}}
        await asyncio.to_thread(save_settings_patch, settings.config_path, patch)
        fresh = await asyncio.to_thread(load_settings, settings.config_path)
    except ConfigError as exc:
        raise ApiError(400, "; ".join(exc.problems) or str(exc)) from None
    setattr(settings.channels, name, getattr(fresh.channels, name))
    await daemon.channels.restart(name)
    shown = next(state for state in daemon.channels.states() if state["name"] == name)
    return JSONResponse(shown)


routes = [Route("/channels/{name}", configure, methods=["PUT"])]
