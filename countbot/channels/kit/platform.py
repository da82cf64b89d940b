"""The generic platform channel: every member the eight platforms share, written once.

A platform subclasses `PlatformChannel[ItsSettings, ItsClient]` and states what it is (`name`,
`title`, `capabilities`, the settings it cannot run without, its optional SDK, its chat class),
then writes only what differs: `run` (connect, call `started()`, serve) and the parsing of its
events into `Incoming` messages, handed to `take`. The sender for the delivery path, the
settings check, the status shown on the Channels page, one chat per id and the live-client
`Link` come from here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar, cast, get_args, get_origin

from countbot.channels.kit.base import Channel, ChatOutput, Incoming, SendError
from countbot.channels.kit.delivery import FileChat, deliver
from countbot.channels.kit.extras import missing_extra
from countbot.channels.kit.link import Link
from countbot.channels.kit.parts import ChannelKit
from countbot.config.secret import SecretStr
from countbot.config.settings import ChannelSettings, channel_section_path
from countbot.runtime.deliveries import ChannelSender, DeliveryResult

S = TypeVar("S", bound=ChannelSettings)
C = TypeVar("C")

CONNECTING = "connecting"


class PlatformChannel(Channel, Generic[S, C]):
    """A channel whose live client (`C`) sits in `self.link` while it is connected.

    Its settings class is `S` (`settings_type`). `required` lists (setting, hint) pairs the
    channel cannot start without; `extra` names the optional SDK (module, pip extra) it needs;
    `chat_type` makes one chat of the link and a chat id (a platform whose chats need more
    writes `chat`). `connection` is what the Channels page shows ("ok", "connecting",
    "reconnecting in 4 s"); `bot` is the bot's own name when known, or the setting `named_by`
    names it where the platform never says; `bot_id` is its id on the platform, where parsing
    needs it to tell mentions of the bot and its own messages.
    """

    title: ClassVar[str]
    settings_type: ClassVar[type[ChannelSettings]]
    required: ClassVar[tuple[tuple[str, str], ...]] = ()
    extra: ClassVar[tuple[str, str] | None] = None
    chat_type: ClassVar[Callable[[Link[Any], str], FileChat]]
    named_by: ClassVar[str] = ""
    # Who "refused" a failed delivery in its report, when not the platform's title.
    refused_by: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The settings class is stated once, as the first type argument.
        for base in getattr(cls, "__orig_bases__", ()):
            if get_origin(base) is PlatformChannel:
                cls.settings_type = get_args(base)[0]

    def __init__(self, kit: ChannelKit) -> None:
        self.kit = kit
        self.name = kit.name
        self.link: Link[C] = Link(self.title)
        self._sender = PlatformSender(self)
        self.bot: str | None = None
        self.bot_id = ""
        self.connection: str = CONNECTING
        # Set once the daemon stops the channel: reconnect loops end instead of trying again.
        self.stopping = False
        self._closer: Callable[[], Awaitable[object]] | None = None

    @classmethod
    def problem(cls, settings: ChannelSettings, where: str) -> str | None:
        if not isinstance(settings, cls.settings_type):
            return f"{where} is not a {cls.title} section"
        for key, hint in cls.required:
            if not getattr(settings, key, None):
                return f"{where}.{key} is not set{f' ({hint})' if hint else ''}"
        return missing_extra(*cls.extra) if cls.extra else None

    @property
    def sender(self) -> ChannelSender:
        return self._sender

    def details(self) -> dict[str, Any]:
        bot = getattr(self.settings, self.named_by) if self.named_by else self.bot
        return {"bot": bot, "connection": self.connection}

    @property
    def settings(self) -> S:
        """The channel's settings as they are now (config edits apply where they can)."""
        settings = self.kit.settings()
        assert isinstance(settings, self.settings_type)
        return cast(S, settings)

    def required_values(self) -> tuple[str, ...]:
        """The `required` settings' values in their order, secrets revealed (`problem` made
        sure they are set before the channel was started)."""
        values = []
        for key, _hint in self.required:
            value = getattr(self.settings, key, None)
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            if not value:
                raise ValueError(f"{channel_section_path(self.name)}.{key} is not set")
            values.append(str(value))
        return tuple(values)

    def chat(self, chat_id: str) -> FileChat:
        """One chat of this platform; raises a permanent `SendError` for an id that is none."""
        return self.chat_type(self.link, chat_id)

    async def take(self, incoming: Incoming | None, chat: ChatOutput | None = None) -> None:
        """Hand a parsed message (None: nothing to answer) to the shared pipeline."""
        if incoming is not None:
            await self.kit.intake.handle(incoming, chat or self.chat(incoming.chat_id))

    @contextlib.contextmanager
    def connected(self, client: C, connection: str = "ok") -> Iterator[C]:
        """Publish `client` to the chats and the sender while the block runs."""
        self.link.current = client
        self.connection = connection
        try:
            yield client
        finally:
            self.link.current = None
            self.connection = CONNECTING

    def close_with(self, closer: Callable[[], Awaitable[object]]) -> None:
        """How `close` ends the live connection (the client `run` is blocked in)."""
        self._closer = closer

    async def close(self) -> None:
        self.stopping = True
        closer, self._closer = self._closer, None
        if closer is not None:
            await closer()

    def set_connection(self, problem: str | None) -> None:
        """What the platform's client reports (from any thread): a problem, or None for ok."""
        self.connection = problem or "ok"


class PlatformSender:
    """The delivery path into a platform (`ChannelSender`): text split at the platform's limit,
    then the files, into the chat the channel makes of the id."""

    def __init__(self, channel: PlatformChannel[Any, Any]) -> None:
        self.name = channel.name
        self._channel = channel

    async def send(self, chat_id: str, text: str, files: Sequence[Path] = ()) -> DeliveryResult:
        channel = self._channel
        try:
            chat = channel.chat(chat_id)
        except SendError as exc:
            return DeliveryResult(False, exc.detail)
        limit = channel.capabilities.max_message_length
        return await deliver(chat, channel.refused_by or channel.title, text, files, limit)
