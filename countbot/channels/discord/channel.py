"""The Discord channel: the gateway WebSocket in (the daemon connects out; no public URL), REST
out, answers edited in place while they stream. discord.py is an optional extra, imported in
`run`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from countbot.channels.discord.output import MAX_MESSAGE, DiscordChat, DiscordConnection
from countbot.channels.door import (
    CONNECTING,
    ChannelCapabilities,
    DiscordSettings,
    PlatformChannel,
    SenderInfo,
)


class DiscordChannel(PlatformChannel[DiscordSettings, DiscordConnection]):
    name = "discord"
    title = "Discord"
    required = (("token", "the bot's token from the developer portal"),)
    extra = ("discord", "discord")
    capabilities = ChannelCapabilities(
        max_message_length=MAX_MESSAGE,
        markup="markdown",
        edits_in_place=True,
        typing_indicator=True,
    )
    chat_type = DiscordChat

    async def run(self, started: Callable[[], None]) -> None:
        settings = self.settings
        (token,) = self.required_values()
        module = await asyncio.to_thread(_import_client)
        connection = module.DiscordConnection(
            settings.api_url,
            settings.gateway_url,
            lambda: self.settings.group_mode,
            self.take,
            self._on_press,
            self.set_connection,
        )
        try:
            # discord.py's reconnect loop may swallow a cancellation: closing ends it for sure.
            self.close_with(connection.close)
            name = await connection.login(token)  # a bad token fails here
            self.bot = f"@{name}" if name else None
            with self.connected(connection, CONNECTING):
                await connection.serve(started)
        finally:
            await connection.close()

    async def _on_press(self, data: str, sender: SenderInfo, chat_id: str) -> str:
        return await self.kit.answers.press(data, sender, chat_id)


def _import_client() -> Any:
    """The gateway connection's module (its websocket client), imported off the event loop."""
    from countbot.channels.discord import client

    return client
