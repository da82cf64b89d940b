"""The DingTalk channel: Stream mode (the daemon connects out; no public URL) for messages in,
the robot OpenAPI for answers out. dingtalk-stream is an optional extra, imported in `run`.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from typing import Any

import httpx

from countbot.channels.base import Channel, ChannelCapabilities
from countbot.channels.dingtalk.api import DingTalkApi
from countbot.channels.dingtalk.events import to_incoming
from countbot.channels.dingtalk.output import MAX_MESSAGE, ApiLink, DingTalkChat, DingTalkSender
from countbot.channels.extras import missing_extra
from countbot.channels.kit import ChannelKit
from countbot.config.settings import ChannelSettings, DingTalkSettings
from countbot.runtime.outbound import ChannelSender


class DingTalkChannel(Channel):
    name = "dingtalk"
    capabilities = ChannelCapabilities(
        edits_in_place=False,
        max_message_length=MAX_MESSAGE,
        markup="markdown",
        media_in=True,
        media_out=True,
        typing_indicator=False,
    )

    def __init__(self, kit: ChannelKit) -> None:
        self._kit = kit
        self._link = ApiLink("DingTalk")
        self._sender = DingTalkSender(self._link)
        self._problem: str | None = "connecting"

    @staticmethod
    def problem(settings: ChannelSettings) -> str | None:
        if not isinstance(settings, DingTalkSettings) or not settings.client_id:
            return "channels.dingtalk.client_id is not set (the app's AppKey / Client ID)"
        if settings.client_secret is None:
            return "channels.dingtalk.client_secret is not set"
        return missing_extra("dingtalk_stream", "dingtalk")

    @property
    def sender(self) -> ChannelSender:
        return self._sender

    def details(self) -> dict[str, Any]:
        return {"bot": None, "connection": self._problem or "ok"}

    def _settings(self) -> DingTalkSettings:
        settings = self._kit.settings()
        assert isinstance(settings, DingTalkSettings)
        return settings

    async def run(self, started: Callable[[], None]) -> None:
        settings = self._settings()
        assert settings.client_id and settings.client_secret
        secret = settings.client_secret.get_secret_value()
        stream = await asyncio.to_thread(
            importlib.import_module, "countbot.channels.dingtalk.stream"
        )
        async with httpx.AsyncClient(timeout=30, trust_env=False) as http:
            api = DingTalkApi(
                http, settings.client_id, secret, settings.endpoint, settings.oapi_endpoint
            )
            await api.token()  # wrong credentials fail here
            connection = stream.StreamConnection(
                settings.client_id, secret, settings.endpoint, self._on_message, self._set_problem
            )
            self._link.current = api
            started()
            try:
                await connection.run()
            finally:
                self._link.current = None
                self._problem = "connecting"

    def _set_problem(self, problem: str | None) -> None:
        self._problem = problem

    async def _on_message(self, message: Any) -> None:
        api = self._link.require()
        incoming = await to_incoming(
            message, self._settings().group_mode, self._kit.media, api.download
        )
        if incoming is not None:
            await self._kit.intake.handle(incoming, DingTalkChat(self._link, incoming.chat_id))
