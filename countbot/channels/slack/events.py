"""Slack Events API payloads (as Socket Mode delivers them) to `Incoming`.

Direct messages arrive as `message` events in an `im` channel; in channels the assistant hears
only `app_mention` (when `group_mode` is "mention"). A message in a thread is its own chat,
`<channel>/<thread_ts>`, so a thread keeps its own session and its answers stay in the thread.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from countbot.channels.door import (
    Attachment,
    Incoming,
    SenderInfo,
    kind_of,
    with_attachments,
)

# Message subtypes written by a person (others are edits, joins, bots and the like).
_PERSON_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})
_LINK = re.compile(r"<(https?://[^|>]+|mailto:[^|>]+)(?:\|([^>]*))?>")


def chat_ref(chat_id: str) -> tuple[str, str | None]:
    """(Slack channel id, thread ts or None) of a chat id."""
    channel, _, thread = chat_id.partition("/")
    return channel, thread or None


def to_incoming(
    event: dict[str, Any],
    bot_user: str,
    group_mode: str,
    download: Callable[[str], Awaitable[bytes]],
) -> Incoming | None:
    """The event as the assistant should see it, or None when it is not for the assistant."""
    kind = event.get("type")
    private = event.get("channel_type") == "im"
    if kind == "message":
        if not private or event.get("subtype") not in _PERSON_SUBTYPES:
            return None
    elif kind != "app_mention" or group_mode != "mention":
        return None
    user, channel, ts = event.get("user"), event.get("channel"), event.get("ts")
    if not user or not channel or not ts or event.get("bot_id") or user == bot_user:
        return None
    thread = event.get("thread_ts")
    chat_id = f"{channel}/{thread}" if thread else str(channel)
    text = readable(str(event.get("text") or ""), bot_user)
    found = [
        Attachment(
            kind_of(str(item.get("mimetype", ""))),
            str(item.get("name") or "file"),
            partial(download, str(item["url_private_download"])),
            str(item.get("mimetype", "")),
        )
        for item in event.get("files") or ()
        if isinstance(item, dict) and item.get("url_private_download")
    ]
    sender = SenderInfo(str(user))  # events carry only the member id
    draft = Incoming(chat_id, sender, str(ts), text, private=private)
    return with_attachments(draft, found)


def readable(text: str, bot_user: str) -> str:
    """Slack's message text as the user typed it: the bot's mention dropped, links and the
    three escaped characters shown plainly."""
    text = text.replace(f"<@{bot_user}>", "")
    text = _LINK.sub(
        lambda m: m.group(1) if not m.group(2) else f"{m.group(2)} ({m.group(1)})", text
    )
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()
