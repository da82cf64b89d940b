"""OneBot v11 message events to `Incoming`: who wrote, whether it is for the bot, what it carries.

Messages arrive as segment arrays (NapCat's default) or as CQ-code strings; both become segments.
In groups only a message that @mentions the bot or replies to one of its messages counts. Images
and files are fetched from the URL the QQ client gives (http(s) only, at most `MAX_DOWNLOAD`
bytes) and saved in the media folder; images are shown to the model inline, voice notes
(`record`, usually SILK) transcribed.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from functools import partial
from typing import Any

import httpx

from countbot.channels.door import Attachment, Incoming, SenderInfo, with_attachments

MAX_DOWNLOAD = 20 * 1024 * 1024
DOWNLOAD_TIMEOUT = 30.0
_CQ = re.compile(r"\[CQ:(?P<type>[\w.-]+)(?P<args>(?:,[^\]]*)?)\]")

MessageSegment = dict[str, Any]


def private_chat(user_id: object) -> str:
    return f"private:{user_id}"


def group_chat(group_id: object) -> str:
    return f"group:{group_id}"


def segments(message: object) -> list[MessageSegment]:
    """The message as OneBot segments, whichever format the client sends."""
    if isinstance(message, list):
        return [s for s in message if isinstance(s, dict) and isinstance(s.get("data"), dict)]
    if not isinstance(message, str):
        return []
    found: list[MessageSegment] = []
    position = 0
    for match in _CQ.finditer(message):
        if match.start() > position:
            found.append(_text(_unescape(message[position : match.start()])))
        args = dict(
            part.split("=", 1) for part in match.group("args").split(",")[1:] if "=" in part
        )
        data = {key: _unescape(value) for key, value in args.items()}
        found.append({"type": match.group("type"), "data": data})
        position = match.end()
    if position < len(message):
        found.append(_text(_unescape(message[position:])))
    return found


def _text(text: str) -> MessageSegment:
    return {"type": "text", "data": {"text": text}}


def _unescape(text: str) -> str:
    # CQ codes escape &, [, ] and , as HTML entities.
    return html.unescape(text.replace("&#44;", ","))


def to_incoming(
    event: dict[str, Any],
    self_id: str | None,
    group_mode: str,
    ours: Callable[[str], bool],
    client: httpx.AsyncClient,
) -> Incoming | None:
    """The event as the assistant should see it, or None when it is not for the assistant.

    `ours(message_id)` says whether the bot sent that message (a reply to it addresses the bot).
    """
    if event.get("post_type") != "message":
        return None
    user_id = str(event.get("user_id", ""))
    if not user_id or user_id == self_id:
        return None
    parts = segments(event.get("message"))
    private = event.get("message_type") == "private"
    if private:
        chat_id = private_chat(user_id)
    elif event.get("message_type") == "group" and group_mode == "mention":
        if not _addressed(parts, self_id, ours):
            return None
        chat_id = group_chat(event.get("group_id"))
    else:
        return None
    message_id = str(event.get("message_id", ""))
    text = "".join(str(s["data"].get("text", "")) for s in parts if s.get("type") == "text").strip()
    found, unoffered = _attachments(parts, client)
    who = event.get("sender") if isinstance(event.get("sender"), dict) else {}
    name = who.get("card") or who.get("nickname") or None
    text = "\n\n".join(part for part in (text, *unoffered) if part)
    draft = Incoming(chat_id, SenderInfo(user_id, None, name), message_id, text, private=private)
    return with_attachments(draft, found)


def _addressed(
    parts: list[MessageSegment], self_id: str | None, ours: Callable[[str], bool]
) -> bool:
    for part in parts:
        data = part["data"]
        if part.get("type") == "at" and self_id and str(data.get("qq")) == self_id:
            return True
        if part.get("type") == "reply" and ours(str(data.get("id"))):
            return True
    return False


def _attachments(
    parts: list[MessageSegment], client: httpx.AsyncClient
) -> tuple[list[Attachment], list[str]]:
    """The files the message carries, and a note for each the QQ client did not offer."""
    found: list[Attachment] = []
    notes: list[str] = []
    for part in parts:
        kind = part.get("type")
        if kind not in ("image", "file", "record"):
            continue
        data = part["data"]
        name = str(data.get("name") or data.get("file") or kind)[:80]
        url = str(data.get("url") or "")
        if url.startswith(("http://", "https://")):
            kind = "audio" if kind == "record" else str(kind)
            fetch = partial(_download, client, url)
            found.append(Attachment(kind, name, fetch, "", (httpx.HTTPError, ValueError)))
        else:
            notes.append(f"[The user sent a {kind} ({name}) that the QQ client did not offer.]")
    return found, notes


async def _download(client: httpx.AsyncClient, url: str) -> bytes:
    async with client.stream("GET", url, timeout=DOWNLOAD_TIMEOUT) as response:
        response.raise_for_status()
        content = bytearray()
        async for chunk in response.aiter_bytes():
            content += chunk
            if len(content) > MAX_DOWNLOAD:
                raise ValueError(f"larger than {MAX_DOWNLOAD // 1_048_576} MB")
    return bytes(content)
