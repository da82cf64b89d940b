"""Sending to QQ through the connected OneBot client: a chat as the shared code's `ChatOutput`,
and the channel's sender for the delivery path.

QQ shows no Markdown and OneBot v11 cannot edit a sent message, so answers go out as plain text
once they are complete. Files go as `base64://` payloads, so the QQ client may run on another
machine (or in a container) than the workspace.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from countbot.channels.door import (
    Link,
    LinkedChat,
    SendError,
    markdown_to_plain,
    read_upload,
)
from countbot.channels.qq.onebot import OneBotConnection

# QQ folds or refuses longer text messages; 3000 characters stays well inside what it shows whole.
MAX_MESSAGE = 3000
PICTURE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".gif", ".webp"})


class QQChat(LinkedChat[OneBotConnection]):
    """One private or group chat (`private:<user id>`, `group:<group id>`), a `ChatOutput`."""

    def __init__(self, link: Link[OneBotConnection], chat_id: str) -> None:
        kind, _, number = chat_id.partition(":")
        if kind not in ("private", "group") or not number.isdigit():
            raise SendError(
                f"{chat_id!r} is no QQ chat: use private:<QQ number> or group:<group number>",
                permanent=True,
            )
        super().__init__(link, chat_id)
        self._group = kind == "group"
        self._number = int(number)

    async def post(self, text: str, *, markdown: bool = True) -> str:
        body = markdown_to_plain(text) if markdown else text
        return await self._send([{"type": "text", "data": {"text": body}}])

    async def send_file(self, path: Path) -> str:
        payload = "base64://" + base64.b64encode(await read_upload(path)).decode("ascii")
        if path.suffix.lower() in PICTURE_SUFFIXES:
            return await self._send([{"type": "image", "data": {"file": payload}}])
        action = "upload_group_file" if self._group else "upload_private_file"
        data = await self._link.require().call(
            action, {**self._target(), "file": payload, "name": path.name}
        )
        return str((data or {}).get("file_id") or f"file:{path.name}")

    async def _send(self, message: list[dict[str, Any]]) -> str:
        action = "send_group_msg" if self._group else "send_private_msg"
        data = await self._link.require().call(
            action, {**self._target(), "message": message}, self._remember
        )
        message_id = _message_id(data)
        if not message_id:
            raise SendError(f"the QQ client accepted {action} but returned no message id")
        return message_id

    def _remember(self, data: Any) -> None:
        """Mark a sent message as the bot's the moment its answer is read (replies to it)."""
        message_id = _message_id(data)
        if message_id:
            self._link.sent.first_time(message_id)

    def _target(self) -> dict[str, int]:
        return {"group_id": self._number} if self._group else {"user_id": self._number}


def _message_id(data: Any) -> str:
    return str((data or {}).get("message_id", "")) if isinstance(data, dict | None) else ""
