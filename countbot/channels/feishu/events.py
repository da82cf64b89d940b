"""Feishu message events (`im.message.receive_v1`) to `Incoming`.

Private (`p2p`) chats always count; in groups only a message that @mentions the bot or replies
to one of its messages does. Text, rich text (`post`), pictures, files and voice notes (`audio`)
are understood: attachments are fetched through the OpenAPI and saved in the media folder,
pictures shown to the model inline, voice notes transcribed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from countbot.channels.door import Attachment, Incoming, SenderInfo, with_attachments

# (message_id, key, "image" | "file") -> the bytes
Download = Callable[[str, str, str], Awaitable[bytes]]


def to_incoming(
    event: Any, bot_open_id: str, group_mode: str, ours: Callable[[str], bool], download: Download
) -> Incoming | None:
    """The event as the assistant should see it, or None when it is not for the assistant."""
    body = event.event
    message, sender = body.message, body.sender
    if sender is None or sender.sender_type != "user" or sender.sender_id is None:
        return None
    private = message.chat_type == "p2p"
    mentions = list(message.mentions or [])
    if not private and (
        group_mode != "mention" or not _addressed(message, mentions, bot_open_id, ours)
    ):
        return None
    try:
        content = json.loads(message.content or "{}")
    except ValueError:
        content = {}
    text, attachments = _content(message.message_type, content)
    for mention in mentions:  # "@_user_1" placeholders: the bot's removed, others by name
        mentioned = mention.id.open_id if mention.id is not None else None
        text = text.replace(
            mention.key or "\x00", "" if mentioned == bot_open_id else f"@{mention.name}"
        )
    who = SenderInfo(str(sender.sender_id.open_id))
    message_id = str(message.message_id)
    draft = Incoming(str(message.chat_id), who, message_id, text.strip(), private=private)
    found = [
        Attachment(
            kind, name, partial(download, message_id, key, "image" if kind == "image" else "file")
        )
        for kind, key, name in attachments
    ]
    return with_attachments(draft, found)


def _addressed(
    message: Any, mentions: list[Any], bot_open_id: str, ours: Callable[[str], bool]
) -> bool:
    if any(m.id is not None and m.id.open_id == bot_open_id for m in mentions):
        return True
    return bool(message.parent_id) and ours(str(message.parent_id))


def _content(kind: str | None, content: dict[str, Any]) -> tuple[str, list[tuple[str, str, str]]]:
    """The text and the (kind, key, name) of each attachment a message carries."""
    if kind == "text":
        return str(content.get("text", "")), []
    if kind == "image":
        return "", [("image", str(content.get("image_key", "")), "picture")]
    if kind == "file":
        return "", [
            ("file", str(content.get("file_key", "")), str(content.get("file_name", "file")))
        ]
    if kind == "audio":  # an Opus voice note; the resource API serves it as a "file"
        return "", [("audio", str(content.get("file_key", "")), "voice.opus")]
    if kind == "post":
        lines, found = [], []
        title = str(content.get("title") or "")
        for paragraph in content.get("content") or []:
            line = ""
            for item in paragraph:
                tag = item.get("tag")
                if tag in ("text", "a", "code_block"):
                    line += str(item.get("text", ""))
                elif tag == "at":
                    line += str(item.get("user_id", ""))
                elif tag == "img":
                    found.append(("image", str(item.get("image_key", "")), "picture"))
            lines.append(line)
        return "\n".join(part for part in (title, *lines) if part), found
    return "", []
