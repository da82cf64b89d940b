"""The UI's files: `/` is index.html, `/static/...` the rest, revalidated, under a strict CSP."""

from __future__ import annotations

from pathlib import Path

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC_DIR = Path(__file__).resolve().parent / "static"

# The UI uses no inline script or style and no remote resource; model output cannot add any.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data: blob:; connect-src 'self'; style-src 'self'; "
    "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
UI_HEADERS = {
    # An upgraded daemon's UI is picked up on the next load (ETags keep it cheap).
    "Cache-Control": "no-cache",
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class UiHeaders:
    """Adds `UI_HEADERS` to every response of the wrapped app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in UI_HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


def static_files() -> ASGIApp:
    return UiHeaders(StaticFiles(directory=STATIC_DIR))


async def index(request: Request) -> Response:
    page = STATIC_DIR / "index.html"
    if not page.is_file():
        return Response("The web UI is not installed.", 404, media_type="text/plain")
    return FileResponse(page, headers=UI_HEADERS)
