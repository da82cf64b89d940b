"""The path from a platform message to an agent turn, the same for every channel.

In order: drop duplicates (remembered durably, `dedup.py`), check access (strangers get a pairing
code, never a turn), take typed answers to approval questions, apply the sender's flood limit
(`/stop` always passes), run chat commands, fetch and save the files the message carries (only
now: a stranger, a flood or a command never makes the daemon download anything), read its voice
notes and documents (the transcript is shown back to the user), and hand everything else to the
gateway in the chat's session, whose turns the channel's `SessionFeed` then renders.
"""

from __future__ import annotations

import logging
from dataclasses import KW_ONLY, dataclass, replace
from typing import Protocol

from countbot.agents.houses import Route
from countbot.channels.kit.access import AccessControl
from countbot.channels.kit.approvals import ApprovalAnswers, parse_approval_reply
from countbot.channels.kit.base import ChatOutput, Incoming, SendError
from countbot.channels.kit.commands import (
    ChatCommands,
    CommandContext,
    default_session,
    parse_command,
)
from countbot.channels.kit.dedup import ReceivedIds
from countbot.channels.kit.feed import SessionFeed
from countbot.channels.kit.media import HouseMedia, taken_in
from countbot.channels.kit.rate_limit import RateLimiter, RateVerdict
from countbot.common.authorship import OWNER, Author
from countbot.config.settings import MAIN, platform_and_account
from countbot.gateway.gateway import Gateway, GatewayClosedError, WrongAgentError
from countbot.gateway.messages import InboundMessage
from countbot.store.channel_state import ChannelStateStore

log = logging.getLogger(__name__)


class Router(Protocol):
    """Which agent a message goes to (`countbot/agents/houses.py`)."""

    def route(
        self, channel: str, *, account: str | None, chat: str | None, sender: str | None
    ) -> Route: ...


TOO_FAST = "You're sending messages faster than I can read them; I'll skip some for a minute."
SHUTTING_DOWN = "I'm restarting right now. Please send that again in a minute."
WRONG_AGENT = "This chat's conversation belongs to another assistant; send /new to start afresh."


@dataclass(eq=False)
class Intake:
    """One channel's inbound pipeline (see the module docstring); `answers` takes typed answers
    to approval questions (chats without buttons); `seen` defaults to the channel's own store."""

    channel: str
    _: KW_ONLY
    gateway: Gateway
    access: AccessControl
    limiter: RateLimiter
    commands: ChatCommands
    chats: ChannelStateStore
    feed: SessionFeed
    # The files a message carries are saved in its agent's workspace.
    media: HouseMedia
    seen: ReceivedIds | None = None
    answers: ApprovalAnswers | None = None
    # Several agents: which one answers (None: `main` answers everything).
    router: Router | None = None

    def __post_init__(self) -> None:
        self._received = self.seen or ReceivedIds(self.chats, self.channel)

    async def handle(self, message: Incoming, output: ChatOutput) -> None:
        """Act on one message; platform failures while replying are logged, never raised."""
        if not await self._received.first_time(message.chat_id, message.message_id):
            log.info("%s: message %s arrived again; ignored", self.channel, message.message_id)
            return
        decision = await self.access.check(message.sender, private=message.private)
        if not decision.allowed:
            log.info("%s: message from %s refused", self.channel, message.sender.describe())
            await _reply(output, decision.reply)
            return
        answer = parse_approval_reply(message.text)
        if answer is not None and self.answers is not None:  # a turn waits on it: no flood limit
            word, code = answer
            await _reply(
                output, await self.answers.reply(word, code, message.sender, message.chat_id)
            )
            return
        command = parse_command(message.text)
        if command != "stop":
            verdict = self.limiter.check(message.sender.sender_id)
            if verdict is not RateVerdict.ALLOW:
                await _reply(output, TOO_FAST if verdict is RateVerdict.WARN else None)
                return
        route = self._route(message)
        if route.agent is None:
            log.warning(
                "%s: message in chat %s refused: %s", self.channel, message.chat_id, route.refusal
            )
            await _reply(output, route.refusal)
            return
        session_id = await self._session_for(message.chat_id, route.agent)
        if command is not None:
            context = CommandContext(self.channel, message.chat_id, session_id)
            await _reply(output, await self.commands.run(command, context))
            return
        self.feed.watch(session_id, output, message.chat_id)
        inbound = await self._inbound(message, output, session_id, route.agent)
        try:
            await self.gateway.submit(inbound)
        except GatewayClosedError:
            await _reply(output, SHUTTING_DOWN)
        except WrongAgentError:
            await _reply(output, WRONG_AGENT)

    async def _inbound(
        self, message: Incoming, output: ChatOutput, session_id: str, agent: str
    ) -> InboundMessage:
        """The message for `agent`'s turn, its files saved in that agent's house and its voice
        notes and documents read (what was heard is shown back before the answer)."""
        media = self.media.of(agent)
        message = await taken_in(message, media, f"{self.channel}-{message.message_id}")
        author = await self._author(message)
        text, parts = await media.read_notes(message.text, author)
        for part in parts:
            if part.kind == "voice" and part.text:
                await _reply(output, f"🎤 “{part.text}”", markdown=False)
        return InboundMessage(
            channel=self.channel,
            content=text,
            chat_id=message.chat_id,
            sender=message.sender.sender_id,
            media=message.images,
            session_id=session_id,
            author=author,
            parts=tuple(parts),
            agent=agent,
        )

    async def _author(self, message: Incoming) -> Author:
        """Who wrote the text, from the platform's facts: the platform says when the sender only
        passed it on (a forward, an unvouched mail); a sender only the open door let in is a
        group member; otherwise it is the owner's own word."""
        if message.written_by is not None:
            return replace(message.written_by, via=self.channel)
        if not await self.access.owns(message.sender):
            return Author("member", message.sender.describe(), self.channel)
        return OWNER

    def _route(self, message: Incoming) -> Route:
        """The bindings see the platform and the bot account the message reached (`telegram`
        and `work` for channel `telegram.work`; the platform's own bot is `MAIN_ACCOUNT`)."""
        if self.router is None:
            return Route(MAIN)
        platform, account = platform_and_account(self.channel)
        return self.router.route(
            platform, account=account, chat=message.chat_id, sender=message.sender.sender_id
        )

    async def _session_for(self, chat_id: str, agent: str) -> str:
        """The session this chat talks in now with `agent` (`<channel>:<chat_id>` until `/new`;
        another agent than `main` talks in `<agent>@<that>`, so a chat rebound to another agent
        never continues the first one's conversation)."""
        assigned = await self.chats.session_for(self.channel, chat_id)
        session = assigned or default_session(self.channel, chat_id)
        if agent == MAIN:
            return session
        return session if session.startswith(f"{agent}@") else f"{agent}@{session}"


async def _reply(output: ChatOutput, text: str | None, *, markdown: bool = True) -> None:
    if text is None:
        return
    try:
        await output.post(text, markdown=markdown)
    except SendError as exc:
        log.warning("a reply could not be delivered: %s", exc.detail)
