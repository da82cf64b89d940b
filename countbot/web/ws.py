"""The `/ws` endpoint: one connection watches any number of sessions and sends turns in.

Everything bound for the client (events, acks, replies, errors) passes through the connection's
one watcher queue, so frames arrive in the order they were produced and a slow client is dropped
(closed with 1013; it reconnects and replays) instead of slowing a turn down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from starlette.websockets import WebSocket

from countbot.config.settings import MAIN
from countbot.gateway.events import SessionEvent
from countbot.gateway.gateway import GatewayClosedError, WrongAgentError
from countbot.gateway.messages import InboundMessage
from countbot.gateway.watchers import Watcher
from countbot.llm.unicode_repair import json_text
from countbot.web.api.media import attachment_parts
from countbot.web.chat_model import turn_model
from countbot.web.context import DaemonContext
from countbot.web.notices import status_frame
from countbot.web.protocol import (
    ApprovalResponse,
    Cancel,
    ClientFrame,
    Ping,
    ProtocolError,
    SendMessage,
    Subscribe,
    SubscribeNotices,
    Unsubscribe,
    parse_frame,
)

log = logging.getLogger(__name__)

CLOSE_TOO_SLOW = 1013


async def websocket_endpoint(websocket: WebSocket) -> None:
    daemon: DaemonContext = websocket.app.state.daemon
    await Connection(websocket, daemon).serve()


class Connection:
    """One client connection: reads frames, runs them, and sends its watcher's queue."""

    def __init__(self, websocket: WebSocket, daemon: DaemonContext) -> None:
        self._ws = websocket
        self._daemon = daemon
        self._hub = daemon.gateway.hub
        self._max_frame = daemon.runtime.settings.web.max_frame_bytes
        self.watcher = Watcher()

    async def serve(self) -> None:
        await self._ws.accept()
        # A chat is open: build the tools and the agent loop now, not at its first message.
        self._daemon.runtime.prepare_turns()
        sender = asyncio.create_task(self._send_loop())
        try:
            await self._receive_loop()
        finally:
            self._hub.drop(self.watcher)
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sender

    async def _receive_loop(self) -> None:
        while True:
            message = await self._ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                self._error("binary frames are not supported; send JSON text frames")
                continue
            # Characters never outnumber bytes, so only long frames need encoding to measure.
            if len(text) * 4 > self._max_frame and (size := len(text.encode())) > self._max_frame:
                self._error(f"frame too large: {size} bytes (limit {self._max_frame})")
                continue
            try:
                frame = parse_frame(text)
            except ProtocolError as exc:
                self._error(str(exc), exc.client_id)
                continue
            await self._handle(frame)

    async def _handle(self, frame: ClientFrame) -> None:
        gateway = self._daemon.gateway
        if isinstance(frame, SendMessage):
            await self._send_message(frame)
        elif isinstance(frame, Cancel):
            gateway.cancel(frame.session_id)
        elif isinstance(frame, Subscribe):
            await self._subscribe(frame)
        elif isinstance(frame, Unsubscribe):
            self._hub.unsubscribe(frame.session_id, self.watcher)
        elif isinstance(frame, Ping):
            self._reply({"type": "pong"})
        elif isinstance(frame, ApprovalResponse):
            self._answer(frame)
        elif isinstance(frame, SubscribeNotices):
            self._hub.connect(self.watcher)
            self._reply(status_frame(self._daemon))

    def _answer(self, frame: ApprovalResponse) -> None:
        approvals = self._daemon.gateway.approvals
        if approvals is None or not approvals.answer(frame.id, frame.decision, frame.via):
            # Answered elsewhere, expired or cancelled: its `approval_settled` already went out.
            self._error(f"approval_response: no open question {frame.id!r}")

    async def _send_message(self, frame: SendMessage) -> None:
        try:
            model = await turn_model(self._daemon, frame)
        except ProtocolError as exc:
            self._error(str(exc), exc.client_id)
            return
        agent = self._agent_of(frame)
        if agent == "":
            return
        try:
            house = agent or await self._session_agent(frame.session_id)
            parts = await attachment_parts(self._daemon, house, frame.attachments)
        except ValueError as exc:
            self._error(f"message: {exc}", frame.client_id)
            return
        if frame.replace_from is not None and not await self._rewind(frame):
            return
        message = InboundMessage(
            channel=frame.via,
            content=frame.content,
            sender=frame.via,
            media=frame.media,
            session_id=frame.session_id,
            mode=frame.mode,
            model=model,
            parts=parts,
            agent=agent,
        )
        try:
            submission = await self._daemon.gateway.submit(
                message, origin=self.watcher, client_id=frame.client_id
            )
        except GatewayClosedError as exc:
            self._error(str(exc), frame.client_id, retryable=True)
            return
        except WrongAgentError as exc:
            self._error(f"message: {exc}", frame.client_id)
            return
        if frame.model is not None:
            await self._daemon.runtime.sessions.set_model(submission.session_id, frame.model)

    def _agent_of(self, frame: SendMessage) -> str | None:
        """The agent the owner picked, or the bindings' for a new session (None: the session's
        own); "" after telling the client why none can answer."""
        houses = self._daemon.houses
        if frame.agent is not None:
            why = houses.unavailable(frame.agent)
            if why:
                self._error(f"message: {why}", frame.client_id)
                return ""
            return frame.agent
        if frame.session_id is not None:
            return None
        route = houses.route(frame.via)
        if route.agent is None:
            self._error(f"message: {route.refusal}", frame.client_id)
            return ""
        return route.agent

    async def _session_agent(self, session_id: str | None) -> str:
        """The agent of an existing session (its files are in that agent's house)."""
        info = await self._daemon.runtime.sessions.get(session_id) if session_id else None
        return info.agent if info is not None else MAIN

    async def _rewind(self, frame: SendMessage) -> bool:
        """Drop the stored tail a regenerate or an edit replaces; False (and an error) if not."""
        session_id = frame.session_id or ""
        if self._daemon.gateway.busy(session_id):
            refusal = "a turn is running in this session; stop it first"
        else:
            refusal = await self._daemon.runtime.sessions.rewind(
                session_id, frame.replace_from or 0
            )
        if refusal:
            self._error(
                f"message: cannot replace from {frame.replace_from}: {refusal}", frame.client_id
            )
        return not refusal

    async def _subscribe(self, frame: Subscribe) -> None:
        session_id = frame.session_id
        known = self._daemon.gateway.busy(session_id)
        if not known and await self._daemon.runtime.sessions.get(session_id) is None:
            self._error(f"subscribe: unknown session {session_id!r}")
            return
        self._hub.unsubscribe(session_id, self.watcher)
        if not self._hub.subscribe(session_id, self.watcher, frame.last_seq):
            # Queued after the replay, so the client reloads once it has what is still buffered.
            self._reply({"type": "resync", "session_id": session_id})
        elif frame.replay_turn and frame.last_seq is None and known:
            self._daemon.gateway.replay_turn(session_id, self.watcher)

    def _error(self, text: str, client_id: str | None = None, *, retryable: bool = False) -> None:
        frame: dict[str, Any] = {
            "type": "error",
            "session_id": None,
            "error": text,
            "retryable": retryable,
        }
        if client_id is not None:
            frame["client_id"] = client_id
        self._reply(frame)

    def _reply(self, frame: dict[str, Any]) -> None:
        self.watcher.offer(frame)

    async def _send_loop(self) -> None:
        queue = self.watcher.queue
        try:
            while True:
                if self.watcher.dropped.is_set():
                    await self._ws.close(CLOSE_TOO_SLOW, "fell behind; reconnect and resubscribe")
                    return
                item = await queue.get()
                frame = item.to_frame(self.watcher) if isinstance(item, SessionEvent) else item
                await self._ws.send_text(json_text(frame))
        except Exception as exc:  # the client went away mid-send; the receive side ends too
            log.debug("websocket send stopped: %s", exc)
