"""The client of a channel's live connection, shared by its chats and its outbound sender."""

from __future__ import annotations

from typing import Generic, TypeVar

from countbot.channels.kit.base import SendError

T = TypeVar("T")


class Link(Generic[T]):
    """`current` is None while the channel is not connected; sends then fail, transiently."""

    def __init__(self, platform: str) -> None:
        self.current: T | None = None
        self._platform = platform

    def require(self) -> T:
        if self.current is None:
            raise SendError(f"the {self._platform} channel is not connected right now")
        return self.current


class LinkedChat(Generic[T]):
    """One chat of a platform (`chat_id`) that talks through the channel's live client; a
    platform's chat class subclasses it and adds what it sends and how."""

    def __init__(self, link: Link[T], chat_id: str) -> None:
        self._link = link
        self.chat_id = chat_id
