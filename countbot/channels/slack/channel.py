"""The Slack channel: Socket Mode for events in (the daemon connects out; no public URL), the
Web API for answers out, updated in place while they stream. slack-sdk is an optional extra,
imported in `run`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from countbot.channels.door import (
    CONNECTING,
    ChannelCapabilities,
    CredentialsRejected,
    PlatformChannel,
    SenderInfo,
    SendError,
    SlackSettings,
)
from countbot.channels.slack.events import chat_ref, to_incoming
from countbot.channels.slack.output import MAX_MESSAGE, SlackApi, SlackChat

# Seconds between looks at whether Socket Mode is connected (for the Channels page).
STATE_INTERVAL = 1.0

# Slack's answers that mean the bot token itself is refused.
_REJECTED = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked"})


class SlackChannel(PlatformChannel[SlackSettings, SlackApi]):
    name = "slack"
    title = "Slack"
    required = (
        ("bot_token", "the app's xoxb- Bot User OAuth Token"),
        ("app_token", "an xapp- token with connections:write"),
    )
    extra = ("slack_sdk", "slack")
    capabilities = ChannelCapabilities(
        max_message_length=MAX_MESSAGE, markup="markdown", edits_in_place=True
    )
    chat_type = SlackChat

    async def run(self, started: Callable[[], None]) -> None:
        api_url = self.settings.api_url
        bot_token, app_token = self.required_values()
        api_module, socket_module = await asyncio.to_thread(_import_sdk)
        api = api_module.SlackApi(bot_token, api_url)
        try:
            self.bot_id, name = await api.identity()  # a wrong bot token fails here
        except SendError as exc:
            if exc.detail in _REJECTED:
                raise CredentialsRejected(
                    f"Slack rejected the bot token ({exc.detail}): copy the Bot User OAuth "
                    "Token (xoxb-…) again from the app's OAuth & Permissions page"
                ) from exc
            raise
        self.bot = f"@{name}" if name else None
        connection = socket_module.SocketConnection(app_token, api_url, self._on_envelope)
        self.close_with(connection.close)
        try:
            with self.connected(api, CONNECTING):
                await connection.connect()
                started()
                while True:
                    up = await connection.connected()
                    self.connection = "ok" if up else "reconnecting to Slack"
                    await asyncio.sleep(STATE_INTERVAL)
        finally:
            with contextlib.suppress(Exception):
                await connection.close()

    async def _on_envelope(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == "interactive":
            await self._press(payload)
            return
        event = payload.get("event")
        if payload.get("type") != "event_callback" or not isinstance(event, dict):
            return
        api = self.link.require()
        await self.take(to_incoming(event, self.bot_id, self.settings.group_mode, api.download))

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
        api = self.link.require()
        for action in payload.get("actions") or ():
            answer = await self.kit.answers.press(str(action.get("value", "")), sender, chat_id)
            channel_id, thread_ts = chat_ref(chat_id)
            with contextlib.suppress(SendError):
                await api.ephemeral(channel_id, thread_ts, sender.sender_id, answer)


def _import_sdk() -> tuple[Any, Any]:
    """The modules that import slack-sdk (slow, and only needed while the channel runs)."""
    from countbot.channels.slack import api, socket_mode

    return api, socket_mode
