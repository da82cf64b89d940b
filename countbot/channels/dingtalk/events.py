"""DingTalk robot messages (`ChatbotMessage`) to `Incoming`.

DingTalk delivers a group message to a robot only when it @mentions the robot, so every group
message that arrives is addressed to it (still checked: `isInAtList`). Pictures (also inside
rich text) and voice notes (`audio`, transcribed) are downloaded through the OpenAPI by their
`downloadCode`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from countbot.channels.door import Attachment, Incoming, SenderInfo, with_attachments

PRIVATE = "1"


def to_incoming(
    message: Any, group_mode: str, download: Callable[[str], Awaitable[bytes]]
) -> Incoming | None:
    """The message as the assistant should see it, or None when it is not for the assistant."""
    private = str(message.conversation_type) == PRIVATE
    if not private and (group_mode != "mention" or not message.is_in_at_list):
        return None
    sender_id = message.sender_staff_id or message.sender_id
    if not sender_id:
        return None
    chat_id = f"private:{sender_id}" if private else f"group:{message.conversation_id}"
    text = "\n".join(t.strip() for t in (message.get_text_list() or []) if t and t.strip())
    found = [
        Attachment("image", "picture", partial(download, code))
        for code in message.get_image_list() or []
    ]
    found += [Attachment("audio", "voice", partial(download, code)) for code in _audio(message)]
    sender = SenderInfo(str(sender_id), None, str(message.sender_nick or ""))
    draft = Incoming(chat_id, sender, str(message.message_id), text, private=private)
    return with_attachments(draft, found)


def _audio(message: Any) -> list[str]:
    """The download code of a voice note (the SDK keeps an `audio` message's content aside)."""
    if message.message_type != "audio":
        return []
    content = (message.extensions or {}).get("content")
    code = content.get("downloadCode") if isinstance(content, dict) else None
    return [str(code)] if code else []
