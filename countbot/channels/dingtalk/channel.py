"""The DingTalk channel: Stream mode (the daemon connects out; no public URL) for messages in,
the robot OpenAPI for answers out. dingtalk-stream is an optional extra, imported in `run`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx

from countbot.channels.dingtalk.api import DingTalkApi
from countbot.channels.dingtalk.events import to_incoming
from countbot.channels.dingtalk.output import MAX_MESSAGE, DingTalkChat
from countbot.channels.door import (
    CONNECTING,
    ChannelCapabilities,
    DingTalkSettings,
    PlatformChannel,
)


class DingTalkChannel(PlatformChannel[DingTalkSettings, DingTalkApi]):
    name = "dingtalk"
    title = "DingTalk"
    required = (("client_id", "the app's AppKey / Client ID"), ("client_secret", ""))
    extra = ("dingtalk_stream", "dingtalk")
    capabilities = ChannelCapabilities(max_message_length=MAX_MESSAGE, markup="markdown")
    chat_type = DingTalkChat

    async def run(self, started: Callable[[], None]) -> None:
        settings = self.settings
        client_id, secret = self.required_values()
        stream = await asyncio.to_thread(_import_stream)
        async with httpx.AsyncClient(timeout=30, trust_env=False) as http:
            api = DingTalkApi(http, client_id, secret, settings.endpoint, settings.oapi_endpoint)
            await api.token()  # wrong credentials fail here
            connection = stream.StreamConnection(
                client_id, secret, settings.endpoint, self._on_message, self.set_connection
            )
            self.close_with(connection.close)
            with self.connected(api, CONNECTING):
                started()
                await connection.run()

    async def _on_message(self, message: Any) -> None:
        api = self.link.require()
        await self.take(to_incoming(message, self.settings.group_mode, api.download))


def _import_stream() -> Any:
    """The module over dingtalk-stream (slow, only needed while the channel runs), off the loop."""
    from countbot.channels.dingtalk import stream

    return stream
