"""The channel interface: what a platform adapter declares, receives and provides.

A channel turns platform updates into `Incoming` messages for its `Intake`, offers a `ChatOutput`
per chat for replies and rendered turns, and a `ChannelSender` for the delivery path. Everything
between (access, commands, rendering) is shared, so a new platform is one module.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from countbot.channels.kit.approvals import Button
from countbot.common.authorship import Author
from countbot.config.settings import ChannelSettings
from countbot.llm.types import ImagePart
from countbot.runtime.deliveries import ChannelSender
from countbot.store.pairing import SenderInfo

Markup = Literal["plain", "markdown", "html"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelCapabilities:
    """What a platform can show; the renderer adapts a turn to it.

    `max_message_length` is counted in UTF-16 code units (what Telegram counts; never fewer than
    characters, so it is safe for platforms that count characters). The defaults are what a
    platform has unless it says otherwise: plain text sent whole, files both ways, no typing.
    """

    max_message_length: int
    markup: Markup = "plain"
    edits_in_place: bool = False
    media_in: bool = True
    media_out: bool = True
    typing_indicator: bool = False


class SendError(Exception):
    """A platform refused or failed a send.

    `retry_after` is set when the platform said when to try again (a flood limit); `permanent`
    when trying again cannot help (the chat is gone, the bot was blocked).
    """

    def __init__(
        self, detail: str, *, retry_after: float | None = None, permanent: bool = False
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.retry_after = retry_after
        self.permanent = permanent


@dataclass(frozen=True, slots=True)
class Attachment:
    """Something a user sent with a message, fetched on demand from its platform.

    `kind` is "image" (shown to vision models), "audio" (a voice note) or "file"; `media_type`
    is what the platform said it is, if anything; `fetch` raises one of `failures` when the
    platform cannot hand it over (the model then reads a note saying so).
    """

    kind: str
    name: str
    fetch: Callable[[], Awaitable[bytes]]
    media_type: str = ""
    failures: tuple[type[Exception], ...] = (SendError,)


@dataclass(frozen=True, slots=True)
class Incoming:
    """One platform message addressed to the assistant, already reduced to what a turn needs.

    `message_id` is the platform's id, unique within the chat (used to drop duplicates); `private`
    is False in group chats, where strangers get no pairing code; `written_by` says who wrote the
    text when the sender only passed it on (a forward, an unauthenticated mail), so the turn counts
    it as a stranger's text (`countbot/common/authorship.py`). `attachments` are not fetched yet:
    the intake fetches them only for a message it lets through to a turn, so a stranger never makes
    the daemon download anything."""

    chat_id: str
    sender: SenderInfo
    message_id: str
    text: str
    images: tuple[ImagePart, ...] = ()
    private: bool = True
    written_by: Author | None = None
    attachments: tuple[Attachment, ...] = ()


class ChatOutput(Protocol):
    """One chat as the shared code sees it. Methods raise `SendError`.

    `markdown=True` means the text is Markdown the channel renders in its own markup (falling
    back to plain text when the platform rejects it); False sends the text as it is.
    """

    async def post(self, text: str, *, markdown: bool = True) -> str:
        """Send a new message; returns its platform id."""
        ...

    async def edit(self, message_id: str, text: str, *, markdown: bool = True) -> None:
        """Replace a sent message's text; an unchanged text is not an error."""
        ...

    async def typing(self) -> None:
        """Show that an answer is being written (the platform shows it for a few seconds)."""
        ...


@runtime_checkable
class ButtonChat(Protocol):
    """A chat that shows buttons; approval questions elsewhere are answered by a typed reply."""

    async def post_buttons(self, text: str, buttons: Sequence[Button]) -> str:
        """Send a Markdown message with buttons under it (an approval question); its id.

        Editing the message later (`edit`) removes the buttons.
        """
        ...


@runtime_checkable
class VoiceChat(Protocol):
    """A chat that takes voice notes (spoken replies are sent where one does)."""

    async def send_voice(self, ogg_opus: bytes) -> str:
        """Send an OGG/Opus voice note; returns its platform id."""
        ...


class Channel(ABC):
    """A platform adapter the `ChannelManager` runs, restarts and reports on."""

    # The platform's name on the class; an instance's is its channel's: the platform's, or
    # `<platform>.<account>` for another bot account of it (what sessions, cursors, pairing
    # and deliveries are keyed by).
    name: str
    capabilities: ClassVar[ChannelCapabilities]

    @property
    @abstractmethod
    def sender(self) -> ChannelSender:
        """The delivery path's way into this channel (registered while the channel runs)."""

    @abstractmethod
    async def run(self, started: Callable[[], None]) -> None:
        """Connect, call `started()`, then serve until cancelled; raising means it crashed."""

    async def close(self) -> None:
        """Close the platform client, so the task in `run` ends; called before that task is
        cancelled when the daemon stops (some libraries swallow a cancellation while blocked)."""
        return None

    @staticmethod
    def problem(settings: ChannelSettings, where: str) -> str | None:
        """Why these settings (the section at key path `where`) cannot work (shown instead of
        starting), or None."""
        return None

    def details(self) -> dict[str, Any]:
        """Facts worth showing in GET /api/channels (never secrets), e.g. the bot's name."""
        return {}
