"""`countbot chat` through a running daemon: same session store, no second runtime to start.

The daemon is found through `daemon.json` in the data folder; if there is none, or it does not
answer the WebSocket handshake, the caller runs the turn in-process instead. websockets is
imported only once a daemon is found: a one-shot chat without one has no use for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from countbot.agent.events import (
    AgentEvent,
    TurnCancelled,
    TurnDone,
    TurnError,
    event_from_dict,
)
from countbot.agent.notices import final_text
from countbot.cli.approval_prompt import WHO, LineReader, ask
from countbot.config.settings import Settings
from countbot.web.instance import read_daemon_info

if TYPE_CHECKING:
    import httpx
    from websockets.asyncio.client import ClientConnection

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


async def final_answer(events: AsyncIterator[AgentEvent]) -> str:
    """A turn's final text as `chat -m` prints it (`notices.final_text`)."""
    closed = "Error: the daemon closed the connection before the turn finished"
    return await final_text(events, closed)


class DaemonChat:
    """One WebSocket connection to the running daemon, turns read back as agent events.

    Approval questions of our turns are asked through `reader` (None: denied at once) while the
    turn's events keep streaming.
    """

    def __init__(self, connection: ClientConnection, reader: LineReader | None) -> None:
        self._connection = connection
        self._reader = reader
        self._asking: set[asyncio.Task[None]] = set()

    @classmethod
    async def open(cls, settings: Settings, reader: LineReader | None) -> DaemonChat | None:
        """A connection to the daemon of `settings.data_dir`; None when none runs or answers."""
        info = await asyncio.to_thread(read_daemon_info, settings.data_dir)
        if info is None:
            return None
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidHandshake

        try:
            connection = await connect(
                f"{info.local_url('ws')}/ws",
                additional_headers=auth_headers(settings),
                proxy=None,
                open_timeout=CONNECT_TIMEOUT,
                max_size=None,
            )
        except (OSError, InvalidHandshake, TimeoutError):
            return None
        return cls(connection, reader)

    async def __aenter__(self) -> DaemonChat:
        return self

    async def __aexit__(self, *exc: object) -> None:
        for task in self._asking:
            task.cancel()
        await self._connection.close()

    async def turn(
        self, session_id: str, message: str, *, agent: str | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Send `message` in `session_id` (to `agent`: None, the session's own); its events
        until the turn's done, error or cancelled.

        A lost connection ends it with an error event, so every turn ends with exactly one.
        """
        from websockets.exceptions import ConnectionClosed

        frame = {"type": "message", "session_id": session_id, "content": message, "via": "cli"}
        if agent is not None:
            frame["agent"] = agent
        try:
            await self._connection.send(json.dumps(frame))
            async for raw in self._connection:
                frame = json.loads(raw)
                if (
                    frame.get("type") == "approval_request"
                    and frame.get("session_id") == session_id
                ):
                    self._answer_later(frame)
                    continue
                event = _event(frame, session_id)
                if event is not None:
                    yield event
                    if isinstance(event, TurnDone | TurnError | TurnCancelled):
                        return
        except ConnectionClosed:
            pass
        yield TurnError("the daemon closed the connection before the turn finished")

    def _answer_later(self, frame: dict[str, Any]) -> None:
        task = asyncio.create_task(self._answer(frame))
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def _answer(self, frame: dict[str, Any]) -> None:
        from websockets.exceptions import ConnectionClosed

        decision = await ask(self._reader, frame)
        via = WHO if self._reader is not None else f"{WHO}:no-terminal"
        response = {
            "type": "approval_response",
            "id": frame["id"],
            "decision": decision,
            "via": via,
        }
        with contextlib.suppress(ConnectionClosed):
            await self._connection.send(json.dumps(response))

    async def cancel(self, session_id: str) -> None:
        """Ask the daemon to cancel the running turn of `session_id`."""
        from websockets.exceptions import ConnectionClosed

        with contextlib.suppress(ConnectionClosed):  # the turn ends with an error event then
            await self._connection.send(json.dumps({"type": "cancel", "session_id": session_id}))


def _event(frame: dict[str, Any], session_id: str) -> AgentEvent | None:
    """The agent event a daemon frame stands for (None for frames the prompt does not show)."""
    kind = frame.get("type")
    # A late answer to a question that already ended is refused; the turn goes on.
    late = str(frame.get("error", "")).startswith("approval_response:")
    if kind == "error" and frame.get("session_id") is None and not late:  # on our own frame
        return TurnError(str(frame.get("error")))
    if frame.get("session_id") != session_id:
        return None
    return event_from_dict(frame)
