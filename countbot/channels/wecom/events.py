"""WeCom AI bot message callbacks to `Incoming`.

WeCom delivers a group message to an AI bot only when it @mentions the bot; the mention opens
the text and is removed. Pictures (alone or in mixed messages) come as a URL and an AES key: the
SDK downloads and decrypts them. Voice notes arrive already transcribed by WeCom (no audio is
offered), so their text enters the turn marked as a transcript.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from countbot.channels.door import Attachment, Incoming, SenderInfo, with_attachments

_LEADING_MENTION = re.compile(r"^\s*@\S+\s*")
# What the SDK's download raises: aiohttp's errors, ValueError or RuntimeError (a bad key).
FAILURES: tuple[type[Exception], ...] = (Exception,)

# (url, aes key) -> the decrypted bytes
Download = Callable[[str, str | None], Awaitable[tuple[bytes, str | None]]]


def to_incoming(frame: dict[str, Any], group_mode: str, download: Download) -> Incoming | None:
    body = frame.get("body") or {}
    sender = str((body.get("from") or {}).get("userid") or "")
    if not sender:
        return None
    private = body.get("chattype") != "group"
    if not private and group_mode != "mention":
        return None
    chat_id = sender if private else str(body.get("chatid") or "")
    if not chat_id:
        return None
    items = _items(body)
    text = "\n".join(_words(item) for item in items if item["msgtype"] in ("text", "voice"))
    if not private:
        text = _LEADING_MENTION.sub("", text, count=1)
    message_id = str(body.get("msgid") or "")
    found = [
        Attachment("image", "picture", partial(_decrypted, download, item["image"]), "", FAILURES)
        for item in items
        if item["msgtype"] == "image"
    ]
    draft = Incoming(chat_id, SenderInfo(sender), message_id, text.strip(), private=private)
    return with_attachments(draft, found)


async def _decrypted(download: Download, picture: dict[str, Any]) -> bytes:
    data, _ = await download(str(picture.get("url", "")), picture.get("aeskey"))
    return data


def _words(item: dict[str, Any]) -> str:
    content = str(item[item["msgtype"]].get("content", ""))
    if item["msgtype"] == "voice":
        return f"[Transcript of the user's voice note, by WeCom. The user's words:]\n{content}"
    return content


def _items(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's parts: one for text or image messages, several for mixed ones."""
    mixed = (body.get("mixed") or {}).get("msg_item") or []
    parts = mixed if body.get("msgtype") == "mixed" else [body]
    return [
        p
        for p in parts
        if isinstance(p, dict)
        and p.get("msgtype") in ("text", "image", "voice")
        and isinstance(p.get(p["msgtype"]), dict)
    ]
