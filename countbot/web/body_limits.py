"""Request bodies are refused past a per-route limit before they are held in memory.

Without this a form of hundreds of megabytes posted to `/login` was read whole before the token was
even checked. The declared Content-Length is checked first (413 at once, nothing read); a chunked
body is counted as it streams and cut off at the limit. Images reach the daemon inside WebSocket
frames, which `web.max_frame_bytes` bounds (uvicorn's `ws_max_size`), not here.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from countbot.web.api.media import MEDIA_LIMIT

# The login form holds one token.
LOGIN_LIMIT = 4096
# Everything else without a route of its own: GETs, the UI's files.
DEFAULT_LIMIT = 64 * 1024


class BodyLimits:
    """ASGI middleware: 413 for an HTTP body larger than the limit of its route."""

    def __init__(self, app: ASGIApp, api_limit: int, hook_limit: int = DEFAULT_LIMIT) -> None:
        self.app = app
        self.api_limit = api_limit
        self.hook_limit = hook_limit

    def limit_for(self, path: str) -> int:
        if path == "/login":
            return LOGIN_LIMIT
        if path == "/api/media":  # voice notes and documents from the web UI
            return MEDIA_LIMIT
        if path.startswith("/hooks/"):  # webhook deliveries (`triggers.max_body_bytes`)
            return self.hook_limit
        if path == "/api" or path.startswith("/api/"):
            return self.api_limit
        return DEFAULT_LIMIT

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = Headers(scope=scope).get("content-length", "")
        # A length with more digits than any limit has is too large without converting it.
        if declared.isdigit() and (len(declared) > 18 or int(declared) > limit):
            await JSONResponse({"error": _too_large_text(limit)}, 413)(scope, receive, send)
            return
        received = 0

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # Raised inside the route's read: Starlette's handler answers 413.
                    raise HTTPException(413, _too_large_text(limit))
            return message

        await self.app(scope, counted_receive, send)


def _too_large_text(limit: int) -> str:
    return f"request body too large (limit {limit:,} bytes)"
