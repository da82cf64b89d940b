"""The Feishu / Lark channel: lark-oapi's long connection (no public URL) and its OpenAPI client.

lark-oapi is an optional extra, imported only when the channel runs (in a worker thread: it
takes seconds). Events arrive in the SDK's own thread and are handled on the daemon's loop
(`api.LongConnection`); answers are interactive cards updated in place while they stream.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from typing import Any

from countbot.channels.base import Channel, ChannelCapabilities
from countbot.channels.dedup import RecentIds
from countbot.channels.extras import missing_extra
from countbot.channels.feishu.events import to_incoming
from countbot.channels.feishu.output import MAX_MESSAGE, ApiLink, FeishuChat, FeishuSender
from countbot.channels.kit import ChannelKit
from countbot.config.settings import ChannelSettings, FeishuSettings
from countbot.runtime.outbound import ChannelSender


class FeishuChannel(Channel):
    """Receives over the long connection, answers through the OpenAPI."""

    name = "feishu"
    capabilities = ChannelCapabilities(
        edits_in_place=True,
        max_message_length=MAX_MESSAGE,
        markup="markdown",
        media_in=True,
        media_out=True,
        typing_indicator=False,
    )

    def __init__(self, kit: ChannelKit) -> None:
        self._kit = kit
        self._link = ApiLink("Feishu")
        self._sent = RecentIds()
        self._sender = FeishuSender(self._link, self._sent)
        self._bot: tuple[str, str] | None = None
        self._problem: str | None = None

    @staticmethod
    def problem(settings: ChannelSettings) -> str | None:
        if not isinstance(settings, FeishuSettings) or not settings.app_id:
            return "channels.feishu.app_id is not set (from the Feishu developer console)"
        if settings.app_secret is None:
            return "channels.feishu.app_secret is not set"
        return missing_extra("lark_oapi", "feishu")

    @property
    def sender(self) -> ChannelSender:
        return self._sender

    def details(self) -> dict[str, Any]:
        return {
            "bot": self._bot[1] if self._bot else None,
            "connection": self._problem or ("ok" if self._link.current else "down"),
        }

    def _settings(self) -> FeishuSettings:
        settings = self._kit.settings()
        assert isinstance(settings, FeishuSettings)
        return settings

    async def run(self, started: Callable[[], None]) -> None:
        settings = self._settings()
        assert settings.app_id and settings.app_secret
        secret = settings.app_secret.get_secret_value()
        # ~3 s and 160 MB, and it grabs an event loop at import: in a worker thread, once.
        api = await asyncio.to_thread(importlib.import_module, "countbot.channels.feishu.api")
        client = api.FeishuApi(settings.app_id, secret, settings.domain)
        self._bot = await client.bot_open_id()  # wrong credentials fail here
        connection = api.LongConnection(
            settings.app_id, secret, settings.domain, self._on_message, self._set_problem
        )
        self._link.current = client
        self._problem = None
        started()
        try:
            await connection.run()
        finally:
            self._link.current = None

    def _set_problem(self, problem: str | None) -> None:
        # Called from the SDK's thread; a plain attribute write is safe to read from the loop.
        self._problem = problem

    async def _on_message(self, event: Any) -> None:
        client = self._link.require()
        incoming = await to_incoming(
            event,
            self._bot[0] if self._bot else "",
            self._settings().group_mode,
            self._sent.__contains__,
            self._kit.media,
            client.download,
        )
        if incoming is not None:
            chat = FeishuChat(self._link, incoming.chat_id, self._sent)
            await self._kit.intake.handle(incoming, chat)
