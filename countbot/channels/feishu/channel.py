"""The Feishu / Lark channel: lark-oapi's long connection (no public URL) and its OpenAPI client.

lark-oapi is an optional extra, imported only when the channel runs (in a worker thread: it
takes seconds). Events arrive in the SDK's own thread and are handled on the daemon's loop
(`api.LongConnection`); answers are interactive cards updated in place while they stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from countbot.channels.door import (
    ChannelCapabilities,
    FeishuSettings,
    PlatformChannel,
)
from countbot.channels.feishu.events import to_incoming
from countbot.channels.feishu.output import MAX_MESSAGE, FeishuApi, FeishuChat


class FeishuChannel(PlatformChannel[FeishuSettings, FeishuApi]):
    """Receives over the long connection, answers through the OpenAPI."""

    name = "feishu"
    title = "Feishu"
    required = (("app_id", "from the Feishu developer console"), ("app_secret", ""))
    extra = ("lark_oapi", "feishu")
    capabilities = ChannelCapabilities(
        max_message_length=MAX_MESSAGE, markup="markdown", edits_in_place=True
    )
    chat_type = FeishuChat

    async def run(self, started: Callable[[], None]) -> None:
        settings = self.settings
        app_id, secret = self.required_values()
        api = await asyncio.to_thread(_import_api)
        client = api.FeishuApi(app_id, secret, settings.domain)
        self.bot_id, self.bot = await client.bot_open_id()  # wrong credentials fail here
        connection = api.LongConnection(
            app_id, secret, settings.domain, self._on_message, self.set_connection
        )
        self.close_with(connection.close)
        with self.connected(client):
            started()
            await connection.run()

    async def _on_message(self, event: Any) -> None:
        client = self.link.require()
        incoming = to_incoming(
            event,
            self.bot_id,
            self.settings.group_mode,
            self.link.sent.__contains__,  # the long connection echoes the bot's messages
            client.download,
        )
        await self.take(incoming)


def _import_api() -> Any:
    """The module over lark-oapi (slow, and it grabs an event loop at import), off the loop."""
    from countbot.channels.feishu import api

    return api
