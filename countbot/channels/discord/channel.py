"""The Discord channel: the gateway WebSocket in (the daemon connects out; no public URL), REST
out, answers edited in place while they stream. discord.py is an optional extra, imported in
`run`.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from typing import Any

from countbot.channels.base import Channel, ChannelCapabilities, Incoming
from countbot.channels.discord.output import MAX_MESSAGE, ConnectionLink, DiscordChat, DiscordSender
from countbot.channels.extras import missing_extra
from countbot.channels.kit import ChannelKit
from countbot.config.settings import ChannelSettings, DiscordSettings
from countbot.runtime.outbound import ChannelSender
from countbot.store.pairing import SenderInfo


class DiscordChannel(Channel):
    name = "discord"
    capabilities = ChannelCapabilities(
        edits_in_place=True,
        max_message_length=MAX_MESSAGE,
        markup="markdown",
        media_in=True,
        media_out=True,
        typing_indicator=True,
    )

    def __init__(self, kit: ChannelKit) -> None:
        self._kit = kit
        self._link = ConnectionLink("Discord")
        self._sender = DiscordSender(self._link)
        self._bot_name: str | None = None
        self._connection = "connecting"

    @staticmethod
    def problem(settings: ChannelSettings) -> str | None:
        if not isinstance(settings, DiscordSettings) or settings.token is None:
            return "channels.discord.token is not set (the bot's token from the developer portal)"
        return missing_extra("discord", "discord")

    @property
    def sender(self) -> ChannelSender:
        return self._sender

    def details(self) -> dict[str, Any]:
        return {"bot": self._bot_name, "connection": self._connection}

    def _settings(self) -> DiscordSettings:
        settings = self._kit.settings()
        assert isinstance(settings, DiscordSettings)
        return settings

    async def run(self, started: Callable[[], None]) -> None:
        settings = self._settings()
        assert settings.token is not None
        module = await asyncio.to_thread(
            importlib.import_module, "countbot.channels.discord.client"
        )
        connection = module.DiscordConnection(
            settings.api_url,
            settings.gateway_url,
            lambda: self._settings().group_mode,
            self._kit.media,
            self._on_message,
            self._on_press,
            self._set_state,
        )
        try:
            name = await connection.login(settings.token.get_secret_value())  # a bad token: here
            self._bot_name = f"@{name}" if name else None
            self._link.current = connection
            await connection.serve(started)
        finally:
            self._link.current = None
            self._connection = "connecting"
            await connection.close()

    def _set_state(self, problem: str | None) -> None:
        self._connection = problem or "ok"

    async def _on_message(self, incoming: Incoming) -> None:
        await self._kit.intake.handle(incoming, DiscordChat(self._link, incoming.chat_id))

    async def _on_press(self, data: str, sender: SenderInfo, chat_id: str) -> str:
        return await self._kit.answers.press(data, sender, chat_id)
