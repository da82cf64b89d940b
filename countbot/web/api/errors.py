"""How the API reads input and reports problems: JSON `{"error": message}` with a fitting status.

Routes raise `ApiError`; anything else becomes a 500 with a generic message (the traceback goes
to the log, never to the client).
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from countbot.json_body import BodyError, read_json_object
from countbot.web.context import DaemonContext

log = logging.getLogger(__name__)


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def daemon_of(request: Request) -> DaemonContext:
    return request.app.state.daemon


async def json_object(request: Request) -> dict[str, Any]:
    """The request's JSON object body (empty: `{}`), within the size limit; ApiError otherwise."""
    try:
        return await read_json_object(
            request, daemon_of(request).runtime.settings.web.max_body_bytes
        )
    except BodyError as exc:
        raise ApiError(exc.status, exc.message) from None


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
    return JSONResponse({"error": exc.message}, exc.status)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code in (204, 304):
        return Response(status_code=exc.status_code)
    return JSONResponse({"error": exc.detail}, exc.status_code)


async def server_error(request: Request, exc: Exception) -> Response:
    log.exception("request %s %s failed", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"error": "internal error; see the daemon's log"}, 500)
