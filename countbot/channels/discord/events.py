"""Discord messages (discord.py's `Message`) to `Incoming`.

In DMs every message is for the assistant; in a server channel only one that mentions the bot
or replies to one of its messages (when `group_mode` is "mention"). The bot's mention is taken
out of the text; attachments are downloaded through the library's CDN client.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import discord

from countbot.channels.door import (
    Attachment,
    Incoming,
    SenderInfo,
    SendError,
    kind_of,
    with_attachments,
)


def addressed(message: discord.Message, me: discord.ClientUser, group_mode: str) -> bool:
    """Whether the assistant should answer `message` (never its own, nor other bots')."""
    if message.author.bot or message.author.id == me.id:
        return False
    if isinstance(message.channel, discord.DMChannel):
        return True
    if group_mode != "mention":
        return False
    if any(user.id == me.id for user in message.mentions):
        return True
    replied = message.reference.resolved if message.reference is not None else None
    return isinstance(replied, discord.Message) and replied.author.id == me.id


def to_incoming(
    message: discord.Message, me: discord.ClientUser, group_mode: str
) -> Incoming | None:
    """The message as the assistant should see it, or None when it is not for the assistant."""
    if not addressed(message, me, group_mode):
        return None
    text = message.content.replace(f"<@{me.id}>", "").replace(f"<@!{me.id}>", "").strip()
    found = [
        Attachment(
            kind_of(item.content_type or ""), item.filename, _fetcher(item), item.content_type or ""
        )
        for item in message.attachments
    ]
    author = message.author
    sender = SenderInfo(str(author.id), author.name, author.display_name)
    private = isinstance(message.channel, discord.DMChannel)
    draft = Incoming(str(message.channel.id), sender, str(message.id), text, private=private)
    return with_attachments(draft, found)


def _fetcher(item: discord.Attachment) -> Callable[[], Awaitable[bytes]]:
    async def fetch() -> bytes:
        try:
            return await item.read()
        except (discord.HTTPException, discord.DiscordException) as exc:
            raise SendError(f"Discord refused the download: {exc}") from exc

    return fetch
