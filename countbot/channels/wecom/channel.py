"""The WeCom (企业微信) AI bot channel over wecom-aibot-python-sdk's long connection (the daemon
connects out; no public URL). The SDK is asyncio-native and runs on the daemon's loop.

Reconnecting is done here, not by the SDK: its own reconnect runs inside the receive task it
then cancels, so after a dropped connection it may never come back. Each connection is a fresh
client with the SDK's retries off; when it drops, the channel waits (with backoff) and connects a
new one. A rejected bot id or secret ends `run`, so the manager reports it and retries slowly.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from countbot.channels.door import Backoff, ChannelCapabilities, PlatformChannel, WeComSettings
from countbot.channels.wecom.events import to_incoming
from countbot.channels.wecom.output import MAX_MESSAGE, WeComChat

log = logging.getLogger(__name__)

AUTH_TIMEOUT = 30.0
WATCH_INTERVAL = 1.0


class AuthenticationError(Exception):
    """WeCom rejected the bot id or secret."""


class WeComChannel(PlatformChannel[WeComSettings, Any]):
    """`C` is the SDK's `WSClient` of the live connection."""

    name = "wecom"
    title = "WeCom"
    required = (("bot_id", "the AI bot's Bot ID"), ("secret", ""))
    extra = ("aibot", "wecom")
    # The long connection cannot send files.
    capabilities = ChannelCapabilities(
        max_message_length=MAX_MESSAGE, markup="markdown", edits_in_place=True, media_out=False
    )
    chat_type = WeComChat
    named_by = "bot_id"

    async def run(self, started: Callable[[], None]) -> None:
        sdk = await asyncio.to_thread(_import_sdk)
        backoff = Backoff(1.0, 30.0)
        announced = False
        while not self.stopping:
            client = self._client(sdk)
            # The SDK's `closed()` waits inside `wait_for`, which may swallow a cancellation.
            self.close_with(client.drop)
            try:
                if await self._connect(client):
                    backoff.reset()
                    with self.connected(client.sdk):
                        if not announced:
                            started()
                            announced = True
                        await client.closed()
            finally:
                with contextlib.suppress(Exception):
                    client.sdk.disconnect()
            delay = backoff.next()
            self.connection = f"reconnecting to WeCom in {delay:g} s"
            log.warning("the WeCom connection is down; reconnecting in %g s", delay)
            await asyncio.sleep(delay)

    def _client(self, sdk: Any) -> _Connection:
        bot_id, secret = self.required_values()
        options = sdk.WSClientOptions(
            bot_id=bot_id,
            secret=secret,
            ws_url=self.settings.ws_url,
            max_reconnect_attempts=0,
            logger=_SdkLogger(),
        )
        return _Connection(sdk.WSClient(options), self._on_frame)

    async def _connect(self, connection: _Connection) -> bool:
        """True once authenticated; False when the connection failed (try again later)."""
        await connection.sdk.connect()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(connection.settled.wait(), AUTH_TIMEOUT)
        if connection.rejected is not None:
            raise AuthenticationError(connection.rejected)
        return connection.authenticated and not connection.gone.is_set()

    async def _on_frame(self, frame: dict[str, Any]) -> None:
        client = self.link.current
        if client is None:
            return
        try:
            incoming = to_incoming(frame, self.settings.group_mode, client.download_file)
            if incoming is not None:
                await self.take(incoming, WeComChat(self.link, incoming.chat_id, frame))
        except Exception:
            log.exception("handling a WeCom message failed")


class _Connection:
    """One SDK client and what its events said."""

    def __init__(self, sdk_client: Any, on_frame: Callable[[dict[str, Any]], Any]) -> None:
        self.sdk = sdk_client
        self.settled = asyncio.Event()
        self.gone = asyncio.Event()
        self.authenticated = False
        self.rejected: str | None = None
        sdk_client.on("authenticated", self._authenticated)
        sdk_client.on("disconnected", self._gone)
        sdk_client.on("error", self._error)
        sdk_client.on("message", on_frame)

    async def closed(self) -> None:
        """Returns once the connection is gone. The SDK says so only for an abrupt loss: a
        socket the server closed cleanly just ends its receive loop, so the state is checked
        every `WATCH_INTERVAL` seconds too."""
        while self.sdk.is_connected and not self.gone.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.gone.wait(), WATCH_INTERVAL)

    async def drop(self) -> None:
        """Disconnect for good: `closed()` returns at once."""
        self.gone.set()
        self.settled.set()
        with contextlib.suppress(Exception):
            self.sdk.disconnect()

    def _authenticated(self) -> None:
        self.authenticated = True
        self.settled.set()

    def _gone(self, reason: object = None) -> None:
        self.gone.set()
        self.settled.set()

    def _error(self, error: Exception) -> None:
        if "Authentication failed" in str(error):
            self.rejected = str(error)
        self._gone()


class _SdkLogger:
    """The SDK's logger interface (`warn` included) onto ours."""

    def __init__(self) -> None:
        self._log = logging.getLogger("aibot")

    def debug(self, message: str, *args: object) -> None:
        self._log.debug(message)

    def info(self, message: str, *args: object) -> None:
        self._log.info(message)

    def warn(self, message: str, *args: object) -> None:
        self._log.warning(message)

    warning = warn

    def error(self, message: str, *args: object) -> None:
        self._log.error("%s %s", message, " ".join(map(str, args)))


def _import_sdk() -> Any:
    """The WeCom bot SDK (the `wecom` extra), imported off the event loop."""
    import aibot

    return aibot
