"""discord.py's client, pointed at the configured API and gateway, and the REST calls the channel
makes through it (their failures as `SendError`). Imported only when the channel runs:
discord.py is an optional extra.

discord.py keeps its REST base (`Route.BASE`) and default gateway as class attributes, so they
are set from the settings before each run (one Discord channel per daemon). The gateway client
heartbeats, RESUMEs after a drop (Discord then replays what was missed) and reconnects with
backoff by itself; `on_state` hears when the connection goes and comes back.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import discord
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from countbot.channels.discord.events import to_incoming
from countbot.channels.door import Button, CredentialsRejected, Incoming, SenderInfo, SendError

# Messages no retry can deliver: the chat is gone, or the bot may not write there.
_PERMANENT_STATUS = frozenset({400, 403, 404})
INTENTS = discord.Intents(guilds=True, dm_messages=True, guild_messages=True, message_content=True)

OnMessage = Callable[[Incoming], Awaitable[None]]
OnPress = Callable[[str, SenderInfo, str], Awaitable[str]]


async def call(request: Callable[[], Awaitable[Any]]) -> Any:
    """One REST call, its failures as `SendError` (discord.py waits out rate limits itself)."""
    try:
        return await request()
    except discord.HTTPException as exc:
        detail = f"{exc.status} {exc.text or exc.response.reason}".strip()
        raise SendError(detail, permanent=exc.status in _PERMANENT_STATUS) from exc
    except (TimeoutError, aiohttp.ClientError, discord.ConnectionClosed) as exc:
        raise SendError(f"Discord is unreachable: {type(exc).__name__}") from exc


class DiscordConnection:
    """The bot's gateway connection and REST client."""

    def __init__(
        self,
        api_url: str,
        gateway_url: str,
        group_mode: Callable[[], str],
        on_message: OnMessage,
        on_press: OnPress,
        on_state: Callable[[str | None], None],
    ) -> None:
        Route.BASE = api_url.rstrip("/")
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)
        self.client = discord.Client(
            intents=INTENTS, allowed_mentions=discord.AllowedMentions.none()
        )
        self._group_mode = group_mode
        self._on_message = on_message
        self._on_press = on_press
        self._on_state = on_state
        self.client.event(self.on_message)
        self.client.event(self.on_interaction)
        self.client.event(self.on_disconnect)
        self.client.event(self.on_ready)
        self.client.event(self.on_resumed)

    async def login(self, token: str) -> str:
        """Check the token (`GET /users/@me`); the bot's name."""
        try:
            await self.client.login(token)
        except discord.LoginFailure as exc:
            raise CredentialsRejected(
                "Discord rejected the bot token (401 Unauthorized): reset it in the Developer "
                "Portal's Bot page and paste the new one"
            ) from exc
        user = self.client.user
        return user.name if user is not None else ""

    async def serve(self, started: Callable[[], None]) -> None:
        """Connect the gateway, call `started()` once READY, then serve until cancelled."""
        connecting = asyncio.create_task(self.client.connect(reconnect=True))
        ready = asyncio.create_task(self.client.wait_until_ready())
        try:
            await asyncio.wait({connecting, ready}, return_when=asyncio.FIRST_COMPLETED)
            if ready.done():
                started()
            await connecting  # raises when the gateway refused for good (a bad token, intents)
        finally:
            ready.cancel()
            connecting.cancel()

    async def close(self) -> None:
        await self.client.close()

    # --- gateway events -----------------------------------------------------------------------

    async def on_message(self, message: discord.Message) -> None:
        me = self.client.user
        if me is None:
            return
        incoming = to_incoming(message, me, self._group_mode())
        if incoming is not None:
            await self._on_message(incoming)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """A button of an approval question; the answer is shown to the presser alone."""
        data = interaction.data or {}
        if (
            interaction.type is not discord.InteractionType.component
            or interaction.channel_id is None
        ):
            return
        user = interaction.user
        sender = SenderInfo(str(user.id), user.name, user.display_name)
        value = str(data.get("custom_id", ""))
        answer = await self._on_press(value, sender, str(interaction.channel_id))
        await call(lambda: interaction.response.send_message(answer, ephemeral=True))

    async def on_disconnect(self) -> None:
        self._on_state("reconnecting to Discord")

    async def on_ready(self) -> None:
        self._on_state(None)

    async def on_resumed(self) -> None:
        self._on_state(None)

    # --- REST ---------------------------------------------------------------------------------

    def _channel(self, chat_id: str) -> discord.PartialMessageable:
        return self.client.get_partial_messageable(int(chat_id))

    async def post(self, chat_id: str, text: str, buttons: tuple[Button, ...] = ()) -> str:
        view = _buttons(buttons) if buttons else discord.utils.MISSING
        message = await call(lambda: self._channel(chat_id).send(text, view=view))
        return str(message.id)

    async def edit(self, chat_id: str, message_id: str, text: str) -> None:
        partial = self._channel(chat_id).get_partial_message(int(message_id))
        await call(lambda: partial.edit(content=text, view=None))

    async def typing(self, chat_id: str) -> None:
        await call(self._channel(chat_id).typing)

    async def upload(self, chat_id: str, name: str, data: bytes) -> str:
        upload = discord.File(io.BytesIO(data), filename=name)
        message = await call(lambda: self._channel(chat_id).send(file=upload))
        return str(message.id)


def _buttons(buttons: tuple[Button, ...]) -> discord.ui.View:
    """Buttons whose presses arrive as interactions (`on_interaction`), not view callbacks."""
    view = discord.ui.View(timeout=None)
    for button in buttons:
        view.add_item(discord.ui.Button(label=button.label[:80], custom_id=button.data))
    return view
