"""Sending to DingTalk through the robot OpenAPI: a chat as the shared code's `ChatOutput` and the
channel's sender for the delivery path.

Robot messages cannot be edited (only AI cards built from a template made in the developer
console can stream), so answers arrive once complete, as DingTalk Markdown messages.
"""

from __future__ import annotations

from pathlib import Path

from countbot.channels.dingtalk.api import DingTalkApi
from countbot.channels.door import LinkedChat, markdown_to_plain, read_upload, truncate

# DingTalk shows Markdown messages up to about 5000 characters whole.
MAX_MESSAGE = 4000
PICTURE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".gif", ".bmp"})
TITLE_LENGTH = 30


class DingTalkChat(LinkedChat[DingTalkApi]):
    """One DingTalk chat (`private:<staffId>` or `group:<conversationId>`), a `ChatOutput`."""

    async def post(self, text: str, *, markdown: bool = True) -> str:
        # The title is what notifications and the chat list show.
        title = truncate(markdown_to_plain(text).strip().split("\n", 1)[0], TITLE_LENGTH) or "…"
        if markdown:
            return await self._link.require().send(
                self.chat_id, "sampleMarkdown", {"title": title, "text": text}
            )
        return await self._link.require().send(self.chat_id, "sampleText", {"content": text})

    async def send_file(self, path: Path) -> str:
        api = self._link.require()
        data = await read_upload(path)
        if path.suffix.lower() in PICTURE_SUFFIXES:
            media_id = await api.upload("image", path.name, data)
            return await api.send(self.chat_id, "sampleImageMsg", {"photoURL": media_id})
        media_id = await api.upload("file", path.name, data)
        kind = path.suffix.lstrip(".").lower() or "file"
        params = {"mediaId": media_id, "fileName": path.name, "fileType": kind}
        return await api.send(self.chat_id, "sampleFile", params)
