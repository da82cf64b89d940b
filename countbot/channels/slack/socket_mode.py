"""slack-sdk's Socket Mode client (aiohttp): the WebSocket Slack pushes events through, its URL
asked from `apps.connections.open` on the same Web API base URL as every other call.

Every envelope is acknowledged only after the daemon took its event in; Slack delivers again
what was not acknowledged (the channel's duplicate check drops a repeat). The SDK reconnects on
its own; `connected()` tells the channel's status whether it is connected now.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

# Seconds between the SDK's pings; also how soon it notices a dropped connection and retries.
PING_INTERVAL = 5.0

Handler = Callable[[str, dict[str, Any]], Awaitable[None]]


class SocketConnection:
    """`handler(kind, payload)` gets each `events_api` and `interactive` envelope's payload."""

    def __init__(self, app_token: str, base_url: str, handler: Handler) -> None:
        web = AsyncWebClient(base_url=base_url)
        self._client = SocketModeClient(
            app_token=app_token,
            web_client=web,
            ping_interval=PING_INTERVAL,
            logger=logging.getLogger("slack_sdk.socket_mode"),
        )
        self._client.socket_mode_request_listeners.append(self._on_request)
        self._handler = handler

    async def connect(self) -> None:
        """Open the first connection; a wrong app token or an unreachable Slack raises."""
        self._client.wss_uri = await self._client.issue_new_wss_url()
        await self._client.connect()

    async def connected(self) -> bool:
        return bool(await self._client.is_connected())

    async def close(self) -> None:
        await self._client.close()

    async def _on_request(self, client: SocketModeClient, request: SocketModeRequest) -> None:
        if request.type in ("events_api", "interactive"):
            try:
                await self._handler(request.type, request.payload)
            except Exception:
                log.exception("handling a Slack %s envelope failed", request.type)
        await client.send_socket_mode_response(SocketModeResponse(request.envelope_id))
