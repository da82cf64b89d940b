"""A channel's view of its sessions: one gateway watcher, one renderer per running turn.

Every turn in a watched session is shown in its chat, whoever started it (the chat, the web UI
or a scheduled job writing into it). Consuming is never slowed by the platform: events are handed
to renderers, which talk to the platform in their own tasks. If the hub ever drops the watcher
(it fell too far behind), a new one resubscribes and replays what was missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from countbot.agent.events import TERMINAL_TYPES, AgentEvent, event_from_dict
from countbot.channels.kit.approvals import (
    buttons,
    question_text,
    settled_text,
    typed_question_text,
)
from countbot.channels.kit.base import ButtonChat, ChannelCapabilities, ChatOutput, SendError
from countbot.channels.kit.rendering import AnswerBook, RenderSettings, TurnRenderer
from countbot.channels.kit.retry import send_retrying
from countbot.gateway.events import MessageAccepted, SessionEvent, SubagentUpdate
from countbot.gateway.watchers import EventHub, Watcher
from countbot.runtime.approvals import ApprovalAsked, ApprovalSettled
from countbot.runtime.deliveries import Outbox

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _ChatBook:
    """One chat's page of the outbox (an `AnswerBook`)."""

    outbox: Outbox
    channel: str
    chat_id: str

    async def record(self, text: str) -> int | None:
        return await self.outbox.record(self.channel, self.chat_id, text)

    async def settle(self, entry: int | None) -> None:
        await self.outbox.settle(entry)


@dataclass(slots=True)
class _Chat:
    output: ChatOutput
    book: AnswerBook | None = None
    last_seq: int | None = None
    current: TurnRenderer | None = None
    previous: TurnRenderer | None = None
    renderers: set[asyncio.Task[None]] = field(default_factory=set)
    # Approval cards by question id: the task posting each (its result is the message id).
    cards: dict[str, asyncio.Task[str | None]] = field(default_factory=dict)


@dataclass(eq=False)
class SessionFeed:
    """Renders the turns of the sessions it was asked to `watch`; run `run()` as a task.

    Approval questions of turns that came from `channel` are put to its chats; final answers
    are written down in `outbox` before they are sent (see `runtime/outbox.py`).
    """

    hub: EventHub
    capabilities: ChannelCapabilities
    settings: RenderSettings
    channel: str = ""
    outbox: Outbox | None = None
    _chats: dict[str, _Chat] = field(default_factory=dict, init=False)
    _watcher: Watcher = field(default_factory=Watcher, init=False)

    def watch(self, session_id: str, output: ChatOutput, chat_id: str = "") -> None:
        """Show this session's turns through `output` (chat `chat_id`) from now on (idempotent)."""
        book = None
        if self.outbox is not None and chat_id:
            book = _ChatBook(self.outbox, self.channel, chat_id)
        chat = self._chats.get(session_id)
        if chat is None:
            self._chats[session_id] = _Chat(output, book)
            self.hub.subscribe(session_id, self._watcher)
        else:
            chat.output, chat.book = output, book or chat.book

    async def settle(self, grace: float) -> None:
        """Wait up to `grace` s for answers still being delivered (before shutting down)."""
        tasks = {t for chat in self._chats.values() for t in chat.renderers if not t.done()}
        if tasks:
            await asyncio.wait(tasks, timeout=grace)

    async def run(self) -> None:
        try:
            while True:
                item = await self._next()
                if item is not None:
                    self._dispatch(item)
        finally:
            self.hub.drop(self._watcher)
            for chat in self._chats.values():
                for task in chat.renderers:
                    task.cancel()

    async def _next(self) -> SessionEvent | dict[str, Any] | None:
        """The next event; None after replacing a watcher the hub dropped."""
        with contextlib.suppress(asyncio.QueueEmpty):
            return self._watcher.queue.get_nowait()  # the common case while a turn streams
        get = asyncio.ensure_future(self._watcher.queue.get())
        dropped = asyncio.ensure_future(self._watcher.dropped.wait())
        try:
            await asyncio.wait({get, dropped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            dropped.cancel()
            if not get.done():
                get.cancel()
        if get.done() and not get.cancelled():
            return get.result()
        self._resubscribe()
        return None

    def _resubscribe(self) -> None:
        old, self._watcher = self._watcher, Watcher()
        leftovers: list[SessionEvent | dict[str, Any]] = []
        with contextlib.suppress(asyncio.QueueEmpty):
            while True:
                leftovers.append(old.queue.get_nowait())
        for item in leftovers:
            self._dispatch(item)
        log.warning("channel feed fell behind; resubscribing to %d sessions", len(self._chats))
        for session_id, chat in self._chats.items():
            self.hub.subscribe(session_id, self._watcher, chat.last_seq)

    def _dispatch(self, item: SessionEvent | dict[str, Any]) -> None:
        event: AgentEvent | MessageAccepted | SubagentUpdate | None
        if isinstance(item, SessionEvent):
            session_id, seq, event = item.session_id, item.seq, item.event
        else:  # a replayed frame
            session_id, seq = str(item.get("session_id")), int(item.get("seq", 0))
            event = event_from_dict(item)
        chat = self._chats.get(session_id)
        if chat is None or (chat.last_seq is not None and seq <= chat.last_seq):
            return
        chat.last_seq = seq
        if isinstance(event, SubagentUpdate):
            return  # the report that follows is a turn of its own, shown like any other
        if isinstance(event, ApprovalAsked | ApprovalSettled):
            self._approval(chat, event)
        elif isinstance(event, MessageAccepted):
            # Not queued: its turn starts now, so the typing indicator should too.
            if not event.queued:
                self._renderer(chat)
        elif event is not None:
            self._renderer(chat).feed(event)
            if event.type in TERMINAL_TYPES:
                chat.previous, chat.current = chat.current, None

    def _approval(self, chat: _Chat, event: ApprovalAsked | ApprovalSettled) -> None:
        """Post a question's card with its buttons; on its end, edit it to show the decision."""
        if isinstance(event, ApprovalAsked):
            if event.channel == self.channel and event.id not in chat.cards:
                card = _post_card(chat.output, event)
                chat.cards[event.id] = self._spawn(chat, card)
            return
        posted = chat.cards.pop(event.id, None)
        if posted is not None:
            self._spawn(chat, _settle_card(chat.output, posted, event, self.channel))

    def _spawn(self, chat: _Chat, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        task = asyncio.create_task(work)
        chat.renderers.add(task)  # type: ignore[arg-type]
        task.add_done_callback(chat.renderers.discard)  # type: ignore[arg-type]
        task.add_done_callback(_log_failure)  # type: ignore[arg-type]
        return task

    def _renderer(self, chat: _Chat) -> TurnRenderer:
        """The renderer of the chat's running turn, started with the turn's first event."""
        if chat.current is None:
            chat.current = TurnRenderer(
                chat.output, self.capabilities, self.settings, chat.previous, chat.book
            )
            chat.renderers.add(chat.current.task)
            chat.current.task.add_done_callback(chat.renderers.discard)
            chat.current.task.add_done_callback(_log_failure)
        return chat.current


async def _post_card(output: ChatOutput, asked: ApprovalAsked) -> str | None:
    """The question with buttons, or as text saying how to answer where the chat has none."""
    try:
        if isinstance(output, ButtonChat):
            chat = output
            return await send_retrying(
                lambda: chat.post_buttons(question_text(asked), buttons(asked))
            )
        return await send_retrying(lambda: output.post(typed_question_text(asked)))
    except SendError as exc:
        log.warning("an approval question could not be shown: %s", exc.detail)
        return None


async def _settle_card(
    output: ChatOutput, posted: asyncio.Task[str | None], settled: ApprovalSettled, channel: str
) -> None:
    """The card edited to show the decision (its buttons gone). A typed question stays as it was
    and the decision follows it, unless the answer was typed here (its reply said it already)."""
    message_id = await posted
    if message_id is None:
        return
    try:
        if isinstance(output, ButtonChat):
            await send_retrying(lambda: output.edit(message_id, settled_text(settled)))
        elif not settled.by.startswith(f"{channel}:"):
            await send_retrying(lambda: output.post(settled_text(settled)))
    except SendError as exc:
        log.warning("an approval card could not be updated: %s", exc.detail)


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("showing an answer failed", exc_info=task.exception())
