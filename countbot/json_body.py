"""Reading a request's JSON object body: the rules every HTTP API of the daemon shares."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from countbot.text_repair import JsonTextError, loads_untrusted


class BodyError(Exception):
    """A body that cannot be used, with the HTTP status that says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def read_json_object(request: Request, limit: int) -> dict[str, Any]:
    """The JSON object in the body (empty: `{}`); 415, 413 or 400 as a `BodyError` otherwise.

    Requiring `application/json` is also a CSRF guard: a plain HTML form cannot send it.
    """
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/json":
        raise BodyError(415, "send the body as JSON with Content-Type: application/json")
    declared = request.headers.get("content-length")
    if (
        declared is not None
        and declared.isdigit()
        and (len(declared) > 18 or int(declared) > limit)
    ):
        raise BodyError(413, f"body too large: {declared} bytes (limit {limit})")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyError(413, f"body too large (limit {limit} bytes)")
    try:
        data = loads_untrusted(body or b"{}")
    except JsonTextError as exc:
        raise BodyError(400, str(exc)) from None
    if not isinstance(data, dict):
        raise BodyError(400, "the body must be a JSON object")
    return data
