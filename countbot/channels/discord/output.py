"""Sending to Discord: a chat (a channel id, DM or server channel) as the shared code's
`ChatOutput` and the channel's sender for the delivery path.

Discord shows Markdown itself, so answers go as they are; mentions in them never ping anyone
(the client sends `allowed_mentions` empty). Answers stream by editing the message in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from countbot.channels.door import Button, LinkedChat, read_upload

# The client module imports the optional SDK, so its type is only named for checkers.
if TYPE_CHECKING:
    from countbot.channels.discord.client import DiscordConnection
else:
    DiscordConnection = Any

# Discord's limit for a message's content, in characters.
MAX_MESSAGE = 2000


class DiscordChat(LinkedChat[DiscordConnection]):
    async def post(self, text: str, *, markdown: bool = True) -> str:
        return await self._link.require().post(self.chat_id, text)

    async def edit(self, message_id: str, text: str, *, markdown: bool = True) -> None:
        await self._link.require().edit(self.chat_id, message_id, text)

    async def typing(self) -> None:
        await self._link.require().typing(self.chat_id)

    async def post_buttons(self, text: str, buttons: Sequence[Button]) -> str:
        return await self._link.require().post(self.chat_id, text, tuple(buttons))

    async def send_file(self, path: Path) -> str:
        connection = self._link.require()
        return await connection.upload(self.chat_id, path.name, await read_upload(path))
