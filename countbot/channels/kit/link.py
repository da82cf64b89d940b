"""The client of a channel's live connection, shared by its chats and its delivery sender."""

from __future__ import annotations

from typing import Generic, TypeVar

from countbot.channels.kit.base import SendError
from countbot.channels.kit.recent import RecentIds

T = TypeVar("T")


class Link(Generic[T]):
    """`current` is None while the channel is not connected; sends then fail, transiently.

    `sent` holds the ids of messages the chats sent through it, for platforms that echo the
    bot's own messages back (and where a reply to one of them addresses the bot).
    """

    def __init__(self, platform: str) -> None:
        self.current: T | None = None
        self.platform = platform
        self.sent = RecentIds()

    def require(self) -> T:
        if self.current is None:
            raise SendError(f"the {self.platform} channel is not connected right now")
        return self.current


class LinkedChat(Generic[T]):
    """One chat of a platform (`chat_id`) that talks through the channel's live client; a
    platform's chat class subclasses it and adds what it sends and how (`post`, `send_file`).

    `edit` and `typing` match the capabilities' defaults: a platform that edits in place or
    shows typing writes its own; the renderer asks for neither where the platform has none.
    """

    def __init__(self, link: Link[T], chat_id: str) -> None:
        self._link = link
        self.chat_id = chat_id

    async def edit(self, message_id: str, text: str, *, markdown: bool = True) -> None:
        raise SendError(f"{self._link.platform} cannot edit a sent message", permanent=True)

    async def typing(self) -> None:
        """No typing indicator: the draft or the answer itself shows progress."""
