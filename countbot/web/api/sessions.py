"""Sessions: list and search, create, rename, delete, and the paged message history."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from countbot.store.sessions import SessionInfo
from countbot.web.api.errors import ApiError, daemon_of, int_param, json_object, text_param
from countbot.web.chat_model import chat_choices

MAX_TITLE = 200
MAX_PAGE = 200


def session_json(info: SessionInfo, parent: str | None = None) -> dict[str, Any]:
    return {
        "id": info.id,
        "title": info.title,
        "channel": info.channel,
        "created_at": info.created_at,
        "updated_at": info.updated_at,
        "message_count": info.message_count,
        # The model this chat picked (null: the configured one).
        "model": info.model,
        # The session that spawned this one (a subagent's), else null.
        "parent": parent,
        # False: kept out of memory by its switch (neither indexed nor recalled into).
        "memory": not info.memory_off,
        # The agent whose conversation it is (`agents:` in config.yaml).
        "agent": info.agent,
    }


async def list_sessions(request: Request) -> JSONResponse:
    store = daemon_of(request).runtime.sessions
    found = await store.list(
        limit=int_param(request, "limit", 50, low=1, high=MAX_PAGE),
        offset=int_param(request, "offset", 0, low=0, high=1 << 31),
        query=text_param(request, "q"),
        agent=text_param(request, "agent"),
    )
    parents = await daemon_of(request).subagents.parents([info.id for info in found])
    return JSONResponse({"sessions": [session_json(info, parents.get(info.id)) for info in found]})


async def create_session(request: Request) -> JSONResponse:
    body = await json_object(request)
    title = _title(body, required=False)
    info = await daemon_of(request).runtime.sessions.create(title=title, channel="web")
    return JSONResponse(session_json(info), 201)


async def get_session(request: Request) -> JSONResponse:
    session_id = request.path_params["session_id"]
    info = await daemon_of(request).runtime.sessions.get(session_id)
    if info is None:
        raise ApiError(404, f"no session {session_id!r}")
    return JSONResponse(session_json(info))


async def change_session(request: Request) -> JSONResponse:
    """Rename (`title`) and/or keep out of memory (`memory`: false) or let in again (true)."""
    store = daemon_of(request).runtime.sessions
    session_id = request.path_params["session_id"]
    body = await json_object(request)
    memory = body.get("memory")
    if memory is not None and not isinstance(memory, bool):
        raise ApiError(400, "'memory' must be true or false")
    title = _title(body, required=memory is None)
    if title and not await store.rename(session_id, title):
        raise ApiError(404, f"no session {session_id!r}")
    if memory is not None and not await store.set_memory_off(session_id, not memory):
        raise ApiError(404, f"no session {session_id!r}")
    info = await store.get(session_id)
    if info is None:
        raise ApiError(404, f"no session {session_id!r}")
    return JSONResponse(session_json(info))


async def delete_session(request: Request) -> Response:
    daemon = daemon_of(request)
    session_id = request.path_params["session_id"]
    if daemon.gateway.busy(session_id):
        raise ApiError(409, "the session is running a turn; stop it first")
    if not await daemon.runtime.sessions.delete(session_id):
        raise ApiError(404, f"no session {session_id!r}")
    return Response(status_code=204)


async def session_messages(request: Request) -> JSONResponse:
    daemon = daemon_of(request)
    store = daemon.runtime.sessions
    session_id = request.path_params["session_id"]
    if await store.get(session_id) is None:
        raise ApiError(404, f"no session {session_id!r}")
    limit = int_param(request, "limit", 50, low=1, high=MAX_PAGE)
    before = int_param(request, "before_id", 0, low=0, high=1 << 62) or None
    # One record more than asked says whether older ones exist.
    records = await store.messages(session_id, before_id=before, limit=limit + 1)
    has_more = len(records) > limit
    page = records[1:] if has_more else records
    # `running`: a turn is under way, so the page shows the Stop button (and only then).
    running = daemon.gateway.busy(session_id)
    body = {"messages": [_shown(r) for r in page], "has_more": has_more, "running": running}
    return JSONResponse(body)


def _shown(record: dict[str, Any]) -> dict[str, Any]:
    # The per-turn context (clock, channel) is for the model, not for the chat view.
    return {key: value for key, value in record.items() if key != "context"}


def _title(body: dict[str, Any], *, required: bool) -> str:
    title = body.get("title")
    if title is None and not required:
        return ""
    if not isinstance(title, str) or not 1 <= len(title.strip()) <= MAX_TITLE:
        raise ApiError(400, f"'title' must be a string of 1 to {MAX_TITLE} characters")
    return title.strip()


async def chat_models(request: Request) -> JSONResponse:
    """The models a chat may pick (the configured one first) and, with `session_id`, the one
    that chat picked (null: the configured one), for the chat's selector."""
    daemon = daemon_of(request)
    session_id = text_param(request, "session_id")
    info = await daemon.runtime.sessions.get(session_id) if session_id else None
    chosen = info.model if info is not None else None
    return JSONResponse({"models": await chat_choices(daemon), "chosen": chosen})


routes = [
    Route("/chat/models", chat_models, methods=["GET"]),
    Route("/sessions", list_sessions, methods=["GET"]),
    Route("/sessions", create_session, methods=["POST"]),
    Route("/sessions/{session_id}", get_session, methods=["GET"]),
    Route("/sessions/{session_id}", change_session, methods=["PATCH"]),
    Route("/sessions/{session_id}", delete_session, methods=["DELETE"]),
    Route("/sessions/{session_id}/messages", session_messages, methods=["GET"]),
]
