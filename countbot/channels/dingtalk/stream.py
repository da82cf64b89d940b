"""dingtalk-stream's Stream-mode client, made stoppable and pointed at the configured endpoint.

The SDK reads its OpenAPI endpoint from the environment once, at import, asks it for the
WebSocket URL with blocking `requests`, and catches `CancelledError` to reconnect. So it runs
in an `SdkThread` (stopped by stopping its loop), and `open_connection` is replaced by one that
asks the configured endpoint. Robot messages are parsed by the SDK (`ChatbotMessage`) and handed
to the daemon's loop; DingTalk gets the acknowledgement only after the daemon took the message,
and delivers again what was not acknowledged.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import requests
from dingtalk_stream import AckMessage, ChatbotHandler, ChatbotMessage, Credential
from dingtalk_stream.stream import DingTalkStreamClient

from countbot.channels.door import SdkThread

log = logging.getLogger(__name__)

OPEN_TIMEOUT = 15.0


class _Client(DingTalkStreamClient):  # type: ignore[misc]
    def __init__(self, credential: Any, endpoint: str, on_state: Callable[[str | None], None]):
        super().__init__(credential, logger=logging.getLogger("dingtalk_stream.client"))
        self._endpoint = endpoint.rstrip("/")
        self._on_state = on_state
        self._connected_once = False
        self.stopping = False

    def open_connection(self) -> dict[str, Any] | None:
        if self.stopping:  # the SDK's loop asks again after a drop: not while we stop
            return None
        if self._connected_once:
            self._on_state("reconnecting to DingTalk")
        body = {
            "clientId": self.credential.client_id,
            "clientSecret": self.credential.client_secret,
            "subscriptions": [
                {"type": "CALLBACK", "topic": topic} for topic in self.callback_handler_map
            ],
            "ua": "countbot",
        }
        try:
            response = requests.post(
                f"{self._endpoint}/v1.0/gateway/connections/open", json=body, timeout=OPEN_TIMEOUT
            )
            response.raise_for_status()
            answer = response.json()
        except (requests.RequestException, ValueError) as exc:
            log.warning("opening a DingTalk stream connection failed: %s", exc)
            self._on_state(f"reconnecting to DingTalk: {type(exc).__name__}")
            return None
        return answer if isinstance(answer, dict) else None

    async def keepalive(self, ws: Any, ping_interval: int = 60) -> None:
        # The SDK starts this right after it connected: the moment the channel is up again.
        self._connected_once = True
        self._on_state(None)
        await super().keepalive(ws, ping_interval)


class _Handler(ChatbotHandler):  # type: ignore[misc]
    def __init__(
        self, daemon: asyncio.AbstractEventLoop, on_message: Callable[[Any], Awaitable[None]]
    ) -> None:
        super().__init__()
        self._daemon = daemon
        self._on_message = on_message

    async def process(self, callback: Any) -> tuple[int, str]:
        data = callback.data if isinstance(callback.data, dict) else json.loads(callback.data)
        message = ChatbotMessage.from_dict(data)
        taken = asyncio.run_coroutine_threadsafe(self._on_message(message), self._daemon)
        try:
            await asyncio.wrap_future(taken)
        except Exception:
            log.exception("handling a DingTalk message failed")
        return AckMessage.STATUS_OK, "OK"


class StreamConnection:
    """The Stream-mode connection; `on_message` gets each robot message on the daemon's loop."""

    def __init__(
        self,
        app_key: str,
        app_secret: str,
        endpoint: str,
        on_message: Callable[[Any], Awaitable[None]],
        on_state: Callable[[str | None], None],
    ) -> None:
        self._client = _Client(Credential(app_key, app_secret), endpoint, on_state)
        handler = _Handler(asyncio.get_running_loop(), on_message)
        self._client.register_callback_handler(ChatbotMessage.TOPIC, handler)
        self._thread = SdkThread("dingtalk-stream", self._start, self._close)

    async def run(self) -> None:
        await self._thread.run()

    async def close(self) -> None:
        """No new connection from here on; the SDK's loop ends and closes the current one."""
        self._client.stopping = True
        self._thread.stop()

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.run_until_complete(self._client.start())

    async def _close(self) -> None:
        if self._client.websocket is not None:
            await self._client.websocket.close()
