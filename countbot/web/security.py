"""The guard in front of every route: Host and Origin checks, then the access token.

Runs as plain ASGI so WebSocket upgrades are checked before the handshake completes. A
state-changing request or upgrade from a foreign Origin is refused even on loopback, so a web
page the user happens to visit cannot drive the assistant; requests without Origin (CLI, curl)
only need the token.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from countbot.web.access import AccessPolicy

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Close code the UI treats as "go to the login page".
CLOSE_UNAUTHENTICATED = 4401


def needs_token(path: str) -> bool:
    """The API and the WebSocket; the UI's files and the login page are public."""
    return path == "/ws" or path == "/api" or path.startswith("/api/")


class AccessGuard:
    """ASGI middleware applying an `AccessPolicy` to HTTP requests and WebSocket upgrades."""

    def __init__(self, app: ASGIApp, policy: AccessPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        problem = self._forbidden(kind, scope.get("method", "GET"), headers)
        if problem is not None:
            await _refuse(scope, receive, send, 403, problem)
            return
        if needs_token(scope["path"]) and not self.policy.authenticated(
            headers.get("authorization"),
            headers.get("cookie"),
            scope.get("query_string", b"").decode("latin-1"),
        ):
            await _refuse(scope, receive, send, 401, "authentication required")
            return
        await self.app(scope, receive, send)

    def _forbidden(self, kind: str, method: str, headers: Headers) -> str | None:
        if not self.policy.host_allowed(headers.get("host")):
            return "unexpected Host header"
        origin = headers.get("origin")
        checked = kind == "websocket" or method in STATE_CHANGING
        if checked and origin is not None and not self.policy.origin_allowed(origin):
            return f"origin {origin} is not allowed"
        return None


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
    if scope["type"] == "http":
        await JSONResponse({"error": message}, status)(scope, receive, send)
        return
    websocket = WebSocket(scope, receive, send)
    if status == 401:
        # Browsers hide a refused handshake's status from scripts; a close code reaches them.
        await websocket.accept()
        await websocket.close(CLOSE_UNAUTHENTICATED, message)
    elif "websocket.http.response" in scope.get("extensions", {}):
        await websocket.send_denial_response(Response(message, status, media_type="text/plain"))
    else:
        await websocket.close(1008, message)  # before accept: the server answers 403
