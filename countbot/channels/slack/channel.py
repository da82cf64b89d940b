"""The Slack channel: Socket Mode for events in (the daemon connects out; no public URL), the
Web API for answers out, updated in place while they stream. slack-sdk is an optional extra,
imported in `run`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import Callable
from typing import Any

from countbot.channels.base import Channel, ChannelCapabilities, SendError
from countbot.channels.extras import missing_extra
from countbot.channels.kit import ChannelKit
from countbot.channels.slack.events import chat_ref, to_incoming
from countbot.channels.slack.output import MAX_MESSAGE, ApiLink, SlackChat, SlackSender
from countbot.config.settings import ChannelSettings, SlackSettings
from countbot.runtime.outbound import ChannelSender
from countbot.store.pairing import SenderInfo

# Seconds between looks at whether Socket Mode is connected (for the Channels page).
STATE_INTERVAL = 1.0


class SlackChannel(Channel):
    name = "slack"
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
        self._link = ApiLink("Slack")
        self._sender = SlackSender(self._link)
        self._bot_user = ""
        self._bot_name: str | None = None
        self._connection = "connecting"

    @staticmethod
    def problem(settings: ChannelSettings) -> str | None:
        if not isinstance(settings, SlackSettings) or settings.bot_token is None:
            return "channels.slack.bot_token is not set (the app's xoxb- Bot User OAuth Token)"
        if settings.app_token is None:
            return "channels.slack.app_token is not set (an xapp- token with connections:write)"
        return missing_extra("slack_sdk", "slack")

    @property
    def sender(self) -> ChannelSender:
        return self._sender

    def details(self) -> dict[str, Any]:
        return {"bot": self._bot_name, "connection": self._connection}

    def _settings(self) -> SlackSettings:
        settings = self._kit.settings()
        assert isinstance(settings, SlackSettings)
        return settings

    async def run(self, started: Callable[[], None]) -> None:
        settings = self._settings()
        assert settings.bot_token is not None and settings.app_token is not None
        api_module, socket_module = await asyncio.to_thread(_import_sdk)
        api = api_module.SlackApi(settings.bot_token.get_secret_value(), settings.api_url)
        self._bot_user, name = await api.identity()  # a wrong bot token fails here
        self._bot_name = f"@{name}" if name else None
        connection = socket_module.SocketConnection(
            settings.app_token.get_secret_value(), settings.api_url, self._on_envelope
        )
        self._link.current = api
        try:
            await connection.connect()
            started()
            while True:
                up = await connection.connected()
                self._connection = "ok" if up else "reconnecting to Slack"
                await asyncio.sleep(STATE_INTERVAL)
        finally:
            self._link.current = None
            self._connection = "connecting"
            with contextlib.suppress(Exception):
                await connection.close()

    async def _on_envelope(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == "interactive":
            await self._press(payload)
            return
        event = payload.get("event")
        if payload.get("type") != "event_callback" or not isinstance(event, dict):
            return
        api = self._link.require()
        incoming = await to_incoming(
            event, self._bot_user, self._settings().group_mode, self._kit.media, api.download
        )
        if incoming is not None:
            await self._kit.intake.handle(incoming, SlackChat(self._link, incoming.chat_id))

    async def _press(self, payload: dict[str, Any]) -> None:
        """A button of an approval question: the answer is shown to the presser alone."""
        if payload.get("type") != "block_actions":
            return
        user = payload.get("user") or {}
        channel = (payload.get("channel") or {}).get("id")
        message = payload.get("message") or {}
        if not user.get("id") or not channel:
            return
        thread = message.get("thread_ts")
        chat_id = f"{channel}/{thread}" if thread else str(channel)
        sender = SenderInfo(str(user["id"]), user.get("username"), str(user.get("name") or ""))
        api = self._link.require()
        for action in payload.get("actions") or ():
            answer = await self._kit.answers.press(str(action.get("value", "")), sender, chat_id)
            channel_id, thread_ts = chat_ref(chat_id)
            with contextlib.suppress(SendError):
                await api.ephemeral(channel_id, thread_ts, sender.sender_id, answer)


def _import_sdk() -> tuple[Any, Any]:
    """The modules that import slack-sdk (slow, and only needed while the channel runs)."""
    return (
        importlib.import_module("countbot.channels.slack.api"),
        importlib.import_module("countbot.channels.slack.socket_mode"),
    )
