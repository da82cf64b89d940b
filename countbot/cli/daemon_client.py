"""`countbot chat -m` through a running daemon: same session store, no second runtime to start.

The daemon is found through `daemon.json` in the data folder; if there is none, or it does not
answer the WebSocket handshake, the caller runs the turn in-process instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from countbot.cli.approval_prompt import WHO, LineReader, ask
from countbot.config.settings import Settings
from countbot.web.instance import read_daemon_info

CONNECT_TIMEOUT = 5.0


def auth_headers(settings: Settings) -> dict[str, str]:
    """What a client of the local daemon sends to pass its token check."""
    token = settings.web.token
    return {"Authorization": f"Bearer {token.get_secret_value()}"} if token else {}


def error_text(response: httpx.Response) -> str:
    """The `error` of a daemon's JSON error answer (or the start of whatever it sent)."""
    try:
        data = response.json()
    except ValueError:
        return response.text[:200]
    return str(data.get("error", "")) if isinstance(data, dict) else ""


async def answer_via_daemon(
    settings: Settings, message: str, session_id: str, reader: LineReader | None = None
) -> str | None:
    """The turn's final text from the running daemon (errors as "Error: ..."); None if none runs.

    The turn's approval questions are asked through `reader` (None: denied at once).
    """
    info = await asyncio.to_thread(read_daemon_info, settings.data_dir)
    if info is None:
        return None
    headers = auth_headers(settings)
    try:
        connection = await connect(
            f"{info.local_url('ws')}/ws",
            additional_headers=headers,
            proxy=None,
            open_timeout=CONNECT_TIMEOUT,
            max_size=None,
        )
    except (OSError, InvalidHandshake, TimeoutError):
        return None
    async with connection:
        frame = {"type": "message", "session_id": session_id, "content": message}
        await connection.send(json.dumps(frame))
        try:
            return await _final_text(connection, session_id, reader)
        except ConnectionClosed:
            return "Error: the daemon closed the connection before the turn finished"


async def _final_text(
    connection: ClientConnection, session_id: str, reader: LineReader | None
) -> str:
    asking: set[asyncio.Task[None]] = set()
    try:
        return await _read_frames(connection, session_id, reader, asking)
    finally:
        for task in asking:
            task.cancel()


async def _read_frames(
    connection: ClientConnection,
    session_id: str,
    reader: LineReader | None,
    asking: set[asyncio.Task[None]],
) -> str:
    async for raw in connection:
        frame: dict[str, Any] = json.loads(raw)
        kind = frame.get("type")
        if kind == "approval_request" and frame.get("session_id") == session_id:
            task = asyncio.create_task(_answer(connection, frame, reader))
            asking.add(task)
            task.add_done_callback(asking.discard)
            continue
        # A late answer to a question that already ended is refused; the turn goes on.
        late = str(frame.get("error", "")).startswith("approval_response:")
        if kind == "error" and frame.get("session_id") in (None, session_id) and not late:
            return f"Error: {frame.get('error')}"
        if frame.get("session_id") != session_id:
            continue
        if kind == "done":
            return str(frame.get("content", ""))
        if kind == "cancelled":
            return "(cancelled)"
    return "Error: the daemon closed the connection before the turn finished"


async def _answer(
    connection: ClientConnection, frame: dict[str, Any], reader: LineReader | None
) -> None:
    decision = await ask(reader, frame)
    via = WHO if reader is not None else f"{WHO}:no-terminal"
    response = {"type": "approval_response", "id": frame["id"], "decision": decision, "via": via}
    with contextlib.suppress(ConnectionClosed):
        await connection.send(json.dumps(response))
