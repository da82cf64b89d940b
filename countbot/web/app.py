"""Builds the daemon's Starlette app: static UI, login page, REST API and the WebSocket."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount, Route, WebSocketRoute

from countbot.web.access import AccessPolicy
from countbot.web.api import api_mount, triggers
from countbot.web.api.errors import HANDLERS
from countbot.web.body_limits import BodyLimits
from countbot.web.context import DaemonContext
from countbot.web.login import login
from countbot.web.security import AccessGuard
from countbot.web.ui_files import index, static_files
from countbot.web.ws import websocket_endpoint


def create_app(daemon: DaemonContext, port: int) -> Starlette:
    """The ASGI app for a daemon listening on `port`; every request passes the `AccessGuard`."""
    policy = AccessPolicy.from_settings(daemon.runtime.settings.web, port)
    app = Starlette(
        routes=[
            Route("/", index, methods=["GET", "HEAD"]),
            Route("/login", login, methods=["GET", "POST"]),
            WebSocketRoute("/ws", websocket_endpoint),
            api_mount(daemon),
            Mount("/hooks", routes=triggers.hook_routes(daemon.triggers)),
            Mount("/static", app=static_files()),
        ],
        middleware=[
            Middleware(
                BodyLimits,
                api_limit=daemon.runtime.settings.web.max_body_bytes,
                hook_limit=daemon.runtime.settings.triggers.max_body_bytes,
            ),
            Middleware(AccessGuard, policy=policy),
        ],
        exception_handlers=HANDLERS,
    )
    app.state.daemon = daemon
    app.state.policy = policy
    return app
