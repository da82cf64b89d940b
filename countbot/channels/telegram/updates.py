"""Telegram messages to `Incoming`: who wrote, whether it is meant for the bot, what it carries.

Private chats always count; in groups only a message that mentions the bot or replies to it
does. Photos and documents are downloaded into the workspace's media folder; pictures also go
to the model inline, everything else is described in a note the model reads with the text.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Literal

from telegram import Bot, Message, MessageEntity
from telegram.constants import ChatType
from telegram.error import TelegramError

from countbot.channels.door import ImagePart, Incoming, MediaFolder, SenderInfo, take_in

log = logging.getLogger(__name__)

# What the Bot API lets a bot download (getFile).
MAX_DOWNLOAD = 20 * 1024 * 1024

GroupMode = Literal["mention", "ignore"]


@dataclass(frozen=True, slots=True)
class BotIdentity:
    id: int
    username: str


@dataclass(frozen=True, slots=True)
class _Attachment:
    file_id: str
    name: str
    media_type: str
    size: int | None
    kind: Literal["photo", "document", "voice", "audio", "video"]


async def to_incoming(
    message: Message, bot: Bot, me: BotIdentity, group_mode: GroupMode, media: MediaFolder
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
    images, notes = await _attachments(message, bot, media)
    if not text and not images and not notes:
        return None
    sender = SenderInfo(str(user.id), user.username, user.full_name)
    body = "\n\n".join(part for part in (text, *notes) if part)
    # A forward is someone else's text, whoever passes it on.
    forwarded = "the author of a forwarded message" if message.forward_origin else None
    return Incoming(
        str(message.chat.id),
        sender,
        str(message.message_id),
        body,
        tuple(images),
        private,
        forwarded,
    )


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


def _attachment(message: Message) -> _Attachment | None:
    if message.photo:
        photo = message.photo[-1]  # the largest size
        return _Attachment(photo.file_id, "photo.jpg", "image/jpeg", photo.file_size, "photo")
    if message.document is not None:
        doc = message.document
        media_type = doc.mime_type or "application/octet-stream"
        name = doc.file_name or "document"
        return _Attachment(doc.file_id, name, media_type, doc.file_size, "document")
    if message.voice is not None:
        voice = message.voice
        media_type = voice.mime_type or "audio/ogg"
        return _Attachment(voice.file_id, "voice.ogg", media_type, voice.file_size, "voice")
    if message.audio is not None:
        audio = message.audio
        name = audio.file_name or "audio"
        return _Attachment(
            audio.file_id, name, audio.mime_type or "audio", audio.file_size, "audio"
        )
    if message.video is not None:
        video = message.video
        name = video.file_name or "video.mp4"
        return _Attachment(
            video.file_id, name, video.mime_type or "video", video.file_size, "video"
        )
    return None


async def _attachments(
    message: Message, bot: Bot, media: MediaFolder
) -> tuple[list[ImagePart], list[str]]:
    """Download what the message carries; returns the inline images and notes for the model."""
    item = _attachment(message)
    if item is None:
        return [], []
    if item.size is not None and item.size > MAX_DOWNLOAD:
        mb = item.size / 1_048_576
        return [], [f"[The user sent a {item.kind} of {mb:.0f} MB, too large for a bot to fetch.]"]
    try:
        file = await bot.get_file(item.file_id)
        data = bytes(await file.download_as_bytearray())
    except TelegramError as exc:
        log.warning("downloading a Telegram %s failed: %s", item.kind, exc)
        return [], [f"[The user sent a {item.kind}, but downloading it failed: {exc.message}]"]
    stored = f"telegram-{message.chat.id}-{message.message_id}-{item.name}"
    return await take_in(
        media, stored, data, name=item.name, media_type=item.media_type, kind=item.kind
    )
