"""Everything that touches lark-oapi (imported only when the Feishu channel runs: slow and large,
docs/feishu.md).

lark-oapi's REST calls fetch and refresh the tenant token with blocking `requests` inside every
call, even the `a*` variants, so each call runs in a worker thread. Its long-connection client
schedules everything on a module-level event loop it grabbed at import and `start()` blocks
forever: `LongConnection` runs it in an `SdkThread` (a fresh loop in a thread of its own per
run, stopped by stopping that loop) and hands each event to the daemon's loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import lark_oapi as lark
import lark_oapi.ws.client as lark_ws
from lark_oapi.api.im.v1 import (
    CreateFileRequest,
    CreateFileRequestBody,
    CreateImageRequest,
    CreateImageRequestBody,
    CreateMessageRequest,
    CreateMessageRequestBody,
    GetMessageResourceRequest,
    P2ImMessageReceiveV1,
    PatchMessageRequest,
    PatchMessageRequestBody,
)

from countbot.channels.door import SdkThread, SendError

log = logging.getLogger(__name__)

# How long the SDK's thread waits for the daemon to take an event before acknowledging anyway.
HANDLE_TIMEOUT = 60.0
# Feishu's "too many requests" codes: wait and try again.
_RATE_LIMITED = frozenset({99991400, 11232, 230020})
_FLOOD_PAUSE = 1.0


class FeishuApi:
    """The OpenAPI calls the channel makes, as coroutines raising `SendError`."""

    def __init__(self, app_id: str, app_secret: str, domain: str) -> None:
        self._client = (
            lark.Client.builder()
            .app_id(app_id)
            .app_secret(app_secret)
            .domain(domain)
            .log_level(lark.LogLevel.WARNING)
            .build()
        )

    async def bot_open_id(self) -> tuple[str, str]:
        """The bot's open_id and name (a wrong app id or secret fails here)."""
        request = (
            lark.BaseRequest.builder()
            .http_method(lark.HttpMethod.GET)
            .uri("/open-apis/bot/v3/info")
            .token_types({lark.AccessTokenType.TENANT})
            .build()
        )
        response = await self._call(lambda: self._client.request(request))
        bot = json.loads(response.raw.content).get("bot") or {}
        return str(bot.get("open_id", "")), str(bot.get("app_name", ""))

    async def send(self, chat_id: str, msg_type: str, content: dict[str, Any]) -> str:
        body = (
            CreateMessageRequestBody.builder()
            .receive_id(chat_id)
            .msg_type(msg_type)
            .content(json.dumps(content, ensure_ascii=False))
            .build()
        )
        request = (
            CreateMessageRequest.builder().receive_id_type("chat_id").request_body(body).build()
        )
        response = await self._call(lambda: self._client.im.v1.message.create(request))
        return str(response.data.message_id)

    async def update_card(self, message_id: str, card: dict[str, Any]) -> None:
        body = PatchMessageRequestBody.builder().content(json.dumps(card, ensure_ascii=False))
        request = (
            PatchMessageRequest.builder().message_id(message_id).request_body(body.build()).build()
        )
        await self._call(lambda: self._client.im.v1.message.patch(request))

    async def upload_image(self, data: bytes) -> str:
        body = CreateImageRequestBody.builder().image_type("message").image(io.BytesIO(data))
        request = CreateImageRequest.builder().request_body(body.build()).build()
        response = await self._call(lambda: self._client.im.v1.image.create(request))
        return str(response.data.image_key)

    async def upload_file(self, name: str, data: bytes) -> str:
        body = (
            CreateFileRequestBody.builder()
            .file_type("stream")
            .file_name(name)
            .file(io.BytesIO(data))
            .build()
        )
        request = CreateFileRequest.builder().request_body(body).build()
        response = await self._call(lambda: self._client.im.v1.file.create(request))
        return str(response.data.file_key)

    async def download(self, message_id: str, key: str, kind: str) -> bytes:
        """A picture or file a user sent, by the message it came in."""
        request = (
            GetMessageResourceRequest.builder()
            .message_id(message_id)
            .file_key(key)
            .type(kind)
            .build()
        )
        response = await self._call(lambda: self._client.im.v1.message_resource.get(request))
        return bytes(response.file.read())

    @staticmethod
    async def _call(request: Callable[[], Any]) -> Any:
        try:
            response = await asyncio.to_thread(request)
        except Exception as exc:  # requests/httpx failures: the network, not the request
            raise SendError(f"Feishu is unreachable: {type(exc).__name__}") from exc
        if response.success():
            return response
        status = response.raw.status_code if response.raw is not None else 0
        detail = f"{response.msg} (code {response.code})"
        if response.code in _RATE_LIMITED or status == 429:
            raise SendError(detail, retry_after=_FLOOD_PAUSE)
        raise SendError(detail, permanent=status < 500 and response.code is not None)


class LongConnection:
    """lark-oapi's long-connection client in an `SdkThread`; `on_message` runs on the daemon's
    loop.

    An event is acknowledged to Feishu only after the daemon took it (or `HANDLE_TIMEOUT`), so
    Feishu sends again what a crash interrupted; the intake drops what it already saw.
    """

    def __init__(
        self,
        app_id: str,
        app_secret: str,
        domain: str,
        on_message: Callable[[Any], Awaitable[None]],
        on_state: Callable[[str | None], None],
    ) -> None:
        self._daemon_loop = asyncio.get_running_loop()
        self._on_message = on_message
        handler = (
            lark.EventDispatcherHandler.builder("", "")
            .register_p2_im_message_receive_v1(self._received)
            .build()
        )
        self._client = lark_ws.Client(
            app_id, app_secret, event_handler=handler, domain=domain, log_level=lark.LogLevel.INFO
        )
        self._client.on_reconnecting = lambda: on_state("reconnecting to Feishu")
        self._client.on_reconnected = lambda: on_state(None)
        # The SDK has no public close; its own `_disconnect` closes the socket.
        self._thread = SdkThread("feishu-long-connection", self._start, self._client._disconnect)

    async def run(self) -> None:
        """Connect and serve until cancelled; raises what ended the SDK otherwise."""
        await self._thread.run()

    async def close(self) -> None:
        self._thread.stop()

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        # The SDK schedules its tasks on the module-level loop it bound at import.
        lark_ws.loop = loop
        self._client.start()

    def _received(self, event: P2ImMessageReceiveV1) -> None:
        """Runs in the SDK's thread: hand the event over and wait until it was taken."""
        handled = asyncio.run_coroutine_threadsafe(self._on_message(event), self._daemon_loop)
        try:
            handled.result(HANDLE_TIMEOUT)
        except concurrent.futures.TimeoutError:
            log.warning("a Feishu message took over %g s to take in", HANDLE_TIMEOUT)
        except Exception:
            log.exception("handling a Feishu message failed")
