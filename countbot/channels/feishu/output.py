"""Sending to Feishu: a chat as the shared code's `ChatOutput` (answers are cards, updated in
place while they stream), and the channel's sender for the delivery path.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from countbot.channels.door import LinkedChat, read_upload
from countbot.channels.feishu.cards import card

# A card may hold about 30 KB of JSON; 6000 characters leave room for Chinese (3 bytes each).
MAX_MESSAGE = 6000
PICTURE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp"})

# The API module imports the optional SDK, so its type is only named for checkers.
if TYPE_CHECKING:
    from countbot.channels.feishu.api import FeishuApi
else:
    FeishuApi = Any


class FeishuChat(LinkedChat[FeishuApi]):
    """One Feishu chat (its `chat_id`, `oc_...`), a `ChatOutput`."""

    async def post(self, text: str, *, markdown: bool = True) -> str:
        message_id = await self._link.require().send(
            self.chat_id, "interactive", card(text, markdown=markdown)
        )
        self._link.sent.first_time(message_id)
        return message_id

    async def edit(self, message_id: str, text: str, *, markdown: bool = True) -> None:
        await self._link.require().update_card(message_id, card(text, markdown=markdown))

    async def send_file(self, path: Path) -> str:
        api = self._link.require()
        data = await read_upload(path)
        if path.suffix.lower() in PICTURE_SUFFIXES:
            key = await api.upload_image(data)
            return await api.send(self.chat_id, "image", {"image_key": key})
        key = await api.upload_file(path.name, data)
        return await api.send(self.chat_id, "file", {"file_key": key})
