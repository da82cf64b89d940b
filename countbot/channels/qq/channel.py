"""The QQ channel: CountBot hosts a OneBot v11 reverse WebSocket; the QQ client connects to it.

The endpoint is a listener of its own (`channels.qq.host`/`port`/`path`), not a route of the web
UI's server: it admits only a client that presents `channels.qq.access_token` (as OneBot's
`Authorization: Bearer` header or `?access_token=`), compared in constant time, and refuses
any request a browser makes (it carries an `Origin`), so a web page cannot reach it. One client
at a time: a new connection (the client reconnecting) replaces the old one.

Events are queued and handled one after another in their own task, so the socket keeps reading
answers to the calls a handler makes. A client that reconnects and sends an event again is not
answered twice (the intake drops duplicates); answers due while it was away are retried until it
is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
from collections.abc import Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from countbot.channels.door import (
    ChannelCapabilities,
    ChannelKit,
    PlatformChannel,
    QQSettings,
)
from countbot.channels.qq.events import to_incoming
from countbot.channels.qq.onebot import OneBotConnection
from countbot.channels.qq.output import MAX_MESSAGE, QQChat

log = logging.getLogger(__name__)

# Events waiting to be handled; beyond this a flood from the client is dropped, not buffered.
MAX_QUEUED_EVENTS = 1000
MAX_FRAME = 16 * 1024 * 1024


class QQChannel(PlatformChannel[QQSettings, OneBotConnection]):
    """Serves the OneBot endpoint and feeds each message event to the channel's `Intake`.

    `bot` is the QQ account the client is logged in as (its `self_id`)."""

    name = "qq"
    title = "QQ"
    required = (("access_token", "choose one and give the QQ client the same"),)
    capabilities = ChannelCapabilities(max_message_length=MAX_MESSAGE)
    chat_type = QQChat

    def __init__(self, kit: ChannelKit) -> None:
        super().__init__(kit)
        self._endpoint: str | None = None
        self._events: asyncio.Queue[dict[str, Any]] = asyncio.Queue(MAX_QUEUED_EVENTS)

    def details(self) -> dict[str, Any]:
        connected = self.link.current is not None
        return {
            "bot": self.bot,
            "endpoint": self._endpoint,
            "connection": "ok" if connected else "waiting for the QQ client to connect",
        }

    async def run(self, started: Callable[[], None]) -> None:
        settings = self.settings
        async with (
            httpx.AsyncClient(follow_redirects=True) as client,
            serve(
                self._serve_client,
                settings.host,
                settings.port,
                process_request=self._admit,
                max_size=MAX_FRAME,
                server_header=None,
            ) as server,
        ):
            host, port = next(iter(server.sockets)).getsockname()[:2]
            self._endpoint = f"ws://{host}:{port}{settings.path}"
            started()
            handling = asyncio.create_task(self._handle_events(client))
            try:
                await server.serve_forever()
            finally:
                handling.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await handling
                self.link.current = None

    def _admit(self, connection: ServerConnection, request: Request) -> Response | None:
        """Only the QQ client with the access token gets in; browsers never do."""
        settings = self.settings
        url = urlsplit(request.path)
        if url.path.rstrip("/") != settings.path.rstrip("/"):
            return connection.respond(HTTPStatus.NOT_FOUND, "not found\n")
        if "Origin" in request.headers:
            return connection.respond(HTTPStatus.FORBIDDEN, "browsers may not connect here\n")
        role = request.headers.get("X-Client-Role", "Universal")
        if role.lower() != "universal":
            return connection.respond(
                HTTPStatus.BAD_REQUEST, "use the Universal (event + API) reverse WebSocket\n"
            )
        expected = settings.access_token.get_secret_value() if settings.access_token else ""
        offered = _offered_token(request.headers.get("Authorization", ""), url.query)
        if not expected or not hmac.compare_digest(offered.encode(), expected.encode()):
            log.warning("a QQ client was refused: wrong or missing access token")
            return connection.respond(HTTPStatus.UNAUTHORIZED, "wrong access token\n")
        return None

    async def _serve_client(self, socket: ServerConnection) -> None:
        assert socket.request is not None
        self_id = socket.request.headers.get("X-Self-ID") or self.bot
        connection = OneBotConnection(socket, self_id)
        previous, self.link.current = self.link.current, connection
        self.bot = self_id
        if previous is not None:
            await previous.close()
        log.info("QQ client %s connected", self_id or "(unknown account)")
        try:
            async for raw in socket:
                self._received(connection, raw)
        except ConnectionClosed:
            pass
        finally:
            connection.closed()
            if self.link.current is connection:
                self.link.current = None
            log.info("QQ client %s disconnected", self_id or "(unknown account)")

    def _received(self, connection: OneBotConnection, raw: str | bytes) -> None:
        try:
            frame = json.loads(raw)
        except ValueError:
            log.warning("the QQ client sent something that is not JSON; ignored")
            return
        if not isinstance(frame, dict) or connection.received(frame):
            return
        if frame.get("self_id") is not None:
            connection.self_id = self.bot = str(frame["self_id"])
        if frame.get("post_type") != "message":
            return  # heartbeats, lifecycle, notices: nothing to answer
        try:
            self._events.put_nowait(frame)
        except asyncio.QueueFull:
            log.warning("too many QQ messages waiting; dropped message %s", frame.get("message_id"))

    async def _handle_events(self, client: httpx.AsyncClient) -> None:
        while True:
            event = await self._events.get()
            try:
                incoming = to_incoming(
                    event,
                    self.bot,
                    self.settings.group_mode,
                    self.link.sent.__contains__,  # some clients report the bot's messages
                    client,
                )
                await self.take(incoming)
            except Exception:
                log.exception("handling QQ message %s failed", event.get("message_id"))


def _offered_token(authorization: str, query: str) -> str:
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() in ("bearer", "token") and value.strip():
        return value.strip()
    tokens = parse_qs(query).get("access_token")
    return tokens[0] if tokens else ""
