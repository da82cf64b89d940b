"""How the API reads input and reports problems: JSON `{"error": message}` with a fitting status.

Routes raise `ApiError`, the one HTTP error type of the daemon (bodies, parameters, missing
things); anything else becomes a 500 with a generic message (the traceback goes to the log,
never to the client). `HANDLERS` are the app's exception handlers for all three.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from countbot.text.text_repair import JsonTextError, loads_untrusted
from countbot.web.context import DaemonContext

log = logging.getLogger(__name__)


class ApiError(Exception):
    """A request the API refuses, with the HTTP status that says why.

    `code` and `args` name the message for the web UI, which says it in its own language when
    it knows the code (`error.<code>` in its tables) and shows `message` when it does not.
    """

    def __init__(
        self, status: int, message: str, code: str = "", args: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.args_of_code = args or {}


def daemon_of(request: Request) -> DaemonContext:
    return request.app.state.daemon


async def json_object(request: Request, limit: int | None = None) -> dict[str, Any]:
    """The JSON object in the body (empty: `{}`) within `limit` bytes (default
    `web.max_body_bytes`); 415, 413 or 400 as an `ApiError` otherwise.

    Requiring `application/json` is also a CSRF guard: a plain HTML form cannot send it.
    """
    if limit is None:
        limit = daemon_of(request).runtime.settings.web.max_body_bytes
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/json":
        raise ApiError(415, "send the body as JSON with Content-Type: application/json")
    declared = request.headers.get("content-length")
    if (
        declared is not None
        and declared.isdigit()
        and (len(declared) > 18 or int(declared) > limit)
    ):
        raise ApiError(413, f"body too large: {declared} bytes (limit {limit})")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise ApiError(413, f"body too large (limit {limit} bytes)")
    try:
        data = loads_untrusted(bytes(body) or b"{}")
    except JsonTextError as exc:
        raise ApiError(400, str(exc)) from None
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object")
    return data


def int_param(request: Request, name: str, default: int, *, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"'{name}' must be an integer") from None
    if not low <= value <= high:
        raise ApiError(400, f"'{name}' must be between {low} and {high}")
    return value


def text_param(request: Request, name: str) -> str | None:
    return request.query_params.get(name) or None


async def api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    if not exc.code:
        return JSONResponse({"error": exc.message}, exc.status)
    body = {"error": exc.message, "code": exc.code, "args": exc.args_of_code}
    return JSONResponse(body, exc.status)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code in (204, 304):
        return Response(status_code=exc.status_code)
    return JSONResponse({"error": exc.detail}, exc.status_code)


async def server_error(request: Request, exc: Exception) -> Response:
    log.exception("request %s %s failed", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"error": "internal error; see the daemon's log"}, 500)


HANDLERS = {ApiError: api_error, HTTPException: http_error, Exception: server_error}
