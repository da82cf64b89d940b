"""The session feed: gateway events in, one rendered answer per turn out, in order, even when
the hub had to drop the feed's watcher for falling behind."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from countbot.agent.events import TextChunk, TurnDone
from countbot.channels.kit.base import ChannelCapabilities
from countbot.channels.kit.feed import SessionFeed
from countbot.channels.kit.rendering import RenderSettings
from countbot.gateway.events import MessageAccepted
from countbot.gateway.watchers import WATCHER_QUEUE, EventHub

PLAIN = ChannelCapabilities(
    edits_in_place=False,
    max_message_length=10_000,
    markup="plain",
    media_in=False,
    media_out=False,
    typing_indicator=False,
)


class Chat:
    """A platform chat that keeps what it was sent (a channel's `ChatOutput`)."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    async def post(self, text: str, *, markdown: bool = True) -> str:
        await asyncio.sleep(0)
        self.messages.append(text)
        return str(len(self.messages))

    async def edit(self, message_id: str, text: str, *, markdown: bool = True) -> None:
        self.messages[int(message_id) - 1] = text

    async def typing(self) -> None:
        return None


@pytest.fixture
async def hub_and_feed() -> AsyncIterator[tuple[EventHub, SessionFeed]]:
    hub = EventHub()
    feed = SessionFeed(hub, PLAIN, RenderSettings())
    running = asyncio.create_task(feed.run())
    yield hub, feed
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)


async def wait_for(chat: Chat, count: int) -> None:
    for _ in range(1000):
        if len(chat.messages) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{count} messages expected, got {chat.messages}")


async def test_turns_are_shown_in_the_order_they_ran(
    hub_and_feed: tuple[EventHub, SessionFeed],
) -> None:
    hub, feed = hub_and_feed
    chat = Chat()
    feed.watch("s", chat)
    hub.publish("s", MessageAccepted("one", "test", queued=False, mode="followup"))
    hub.publish("s", MessageAccepted("two", "test", queued=True, mode="followup"))
    for answer in ("first", "second"):
        hub.publish("s", TextChunk(answer))
        hub.publish("s", TurnDone(answer))

    await wait_for(chat, 2)
    assert chat.messages == ["first", "second"]


async def test_a_feed_that_fell_behind_catches_up_without_losing_text(
    hub_and_feed: tuple[EventHub, SessionFeed],
) -> None:
    hub, feed = hub_and_feed
    chat = Chat()
    feed.watch("s", chat)
    chunks = [f"{n % 10}" for n in range(WATCHER_QUEUE + 500)]
    # Published without yielding: the feed's queue overflows and the hub drops its watcher.
    for chunk in chunks:
        hub.publish("s", TextChunk(chunk))
    hub.publish("s", TurnDone(""))

    await wait_for(chat, 1)
    assert chat.messages == ["".join(chunks)]
