"""WeCom AI bot message callbacks to `Incoming`.

WeCom delivers a group message to an AI bot only when it @mentions the bot; the mention opens
the text and is removed. Pictures (alone or in mixed messages) come as a URL and an AES key: the
SDK downloads and decrypts them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from countbot.channels.base import Incoming
from countbot.channels.media import MediaFolder, sniff_image_type, take_in
from countbot.llm.types import ImagePart
from countbot.store.pairing import SenderInfo

log = logging.getLogger(__name__)

_LEADING_MENTION = re.compile(r"^\s*@\S+\s*")

# (url, aes key) -> the decrypted bytes
Download = Callable[[str, str | None], Awaitable[tuple[bytes, str | None]]]


async def to_incoming(
    frame: dict[str, Any], group_mode: str, media: MediaFolder, download: Download
) -> Incoming | None:
    body = frame.get("body") or {}
    sender = str((body.get("from") or {}).get("userid") or "")
    if not sender:
        return None
    private = body.get("chattype") != "group"
    if not private and group_mode != "mention":
        return None
    chat_id = sender if private else str(body.get("chatid") or "")
    items = _items(body)
    text = "\n".join(str(i["text"].get("content", "")) for i in items if i["msgtype"] == "text")
    if not private:
        text = _LEADING_MENTION.sub("", text, count=1)
    images: list[ImagePart] = []
    notes: list[str] = []
    message_id = str(body.get("msgid") or "")
    for index, item in enumerate(i for i in items if i["msgtype"] == "image"):
        picture = item["image"]
        try:
            data, _ = await download(str(picture.get("url", "")), picture.get("aeskey"))
        except Exception as exc:  # the SDK raises aiohttp's, ValueError or RuntimeError
            log.warning("downloading a WeCom picture failed: %s", exc)
            notes.append(f"[The user sent a picture, but downloading it failed: {exc}]")
            continue
        stored = f"wecom-{message_id}-{index}-picture"
        more_images, more_notes = await take_in(
            media, stored, data, name="picture", media_type=sniff_image_type(data), kind="image"
        )
        images += more_images
        notes += more_notes
    text = text.strip()
    if not chat_id or (not text and not images and not notes):
        return None
    body_text = "\n\n".join(part for part in (text, *notes) if part)
    return Incoming(chat_id, SenderInfo(sender), message_id, body_text, tuple(images), private)


def _items(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's parts: one for text or image messages, several for mixed ones."""
    mixed = (body.get("mixed") or {}).get("msg_item") or []
    parts = mixed if body.get("msgtype") == "mixed" else [body]
    return [
        p
        for p in parts
        if isinstance(p, dict)
        and p.get("msgtype") in ("text", "image")
        and isinstance(p.get(p["msgtype"]), dict)
    ]
