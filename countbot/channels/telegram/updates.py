"""Telegram messages to `Incoming`: who wrote, whether it is meant for the bot, what it carries.

Private chats always count; in groups only a message that mentions the bot or replies to it
does. Photos and documents become attachments the intake downloads into the workspace's media
folder once it lets the message through; pictures also go to the model inline, everything else
is described in a note the model reads with the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import Literal

from telegram import Bot, Message, MessageEntity
from telegram.constants import ChatType
from telegram.error import TelegramError

from countbot.channels.door import Attachment, Author, Incoming, SenderInfo, with_attachments

# What the Bot API lets a bot download (getFile).
MAX_DOWNLOAD = 20 * 1024 * 1024

GroupMode = Literal["mention", "ignore"]


@dataclass(frozen=True, slots=True)
class BotIdentity:
    id: int
    username: str


def to_incoming(
    message: Message, bot: Bot, me: BotIdentity, group_mode: GroupMode
) -> Incoming | None:
    """The message as the assistant should see it, or None when it is not for the assistant."""
    user = message.from_user
    if user is None or user.is_bot:
        return None
    private = message.chat.type == ChatType.PRIVATE
    if not private:
        if (
            message.chat.type not in (ChatType.GROUP, ChatType.SUPERGROUP)
            or group_mode != "mention"
        ):
            return None
        if not addressed_to(message, me):
            return None
    text = message.text or message.caption or ""
    if not private:
        text = _without_mention(text, me.username)
    found, too_large = _attachments(message, bot)
    text = "\n\n".join(part for part in (text, *too_large) if part)
    sender = SenderInfo(str(user.id), user.username, user.full_name)
    # A forward is someone else's text, whoever passes it on.
    forwarded = Author("forward") if message.forward_origin else None
    chat, message_id = str(message.chat.id), str(message.message_id)
    draft = Incoming(chat, sender, message_id, text, private=private, written_by=forwarded)
    return with_attachments(draft, found)


def addressed_to(message: Message, me: BotIdentity) -> bool:
    """A group message mentions the bot, names it in a command, or replies to it."""
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None and replied.from_user.id == me.id:
        return True
    handle = f"@{me.username}".lower()
    entities = {**message.parse_entities(), **message.parse_caption_entities()}
    for entity, value in entities.items():
        if entity.type == MessageEntity.MENTION and value.lower() == handle:
            return True
        if entity.type == MessageEntity.TEXT_MENTION and entity.user and entity.user.id == me.id:
            return True
        if entity.type == MessageEntity.BOT_COMMAND and value.lower().endswith(handle):
            return True
    return False


def _without_mention(text: str, username: str) -> str:
    return re.sub(rf"(?<!\w)@{re.escape(username)}\b", "", text, flags=re.IGNORECASE).strip()


def _attachment(message: Message, bot: Bot) -> tuple[Attachment, int | None] | None:
    """The file a message carries (Telegram sends one at most) and its size when known."""
    if message.photo:
        photo = message.photo[-1]  # the largest size
        found, kind, name, media_type = photo, "photo", "photo.jpg", "image/jpeg"
    elif message.document is not None:
        found, kind = message.document, "document"
        name, media_type = found.file_name or "document", found.mime_type or ""
    elif message.voice is not None:
        found, kind = message.voice, "voice"
        name, media_type = "voice.ogg", found.mime_type or "audio/ogg"
    elif message.audio is not None:
        found, kind = message.audio, "audio"
        name, media_type = found.file_name or "audio", found.mime_type or "audio"
    elif message.video is not None:
        found, kind = message.video, "video"
        name, media_type = found.file_name or "video.mp4", found.mime_type or "video"
    else:
        return None
    fetch = partial(_download, bot, found.file_id)
    return Attachment(kind, name, fetch, media_type, (TelegramError,)), found.file_size


def _attachments(message: Message, bot: Bot) -> tuple[list[Attachment], list[str]]:
    """What to download, or a note for the model when it cannot be."""
    found = _attachment(message, bot)
    if found is None:
        return [], []
    item, size = found
    if size is not None and size > MAX_DOWNLOAD:
        mb = size / 1_048_576
        return [], [f"[The user sent a {item.kind} of {mb:.0f} MB, too large for a bot to fetch.]"]
    return [item], []


async def _download(bot: Bot, file_id: str) -> bytes:
    file = await bot.get_file(file_id)
    return bytes(await file.download_as_bytearray())
