"""Answers owed to chats: written down before they are sent, settled once the platform took
them, so a crash, a kill or an outage between a turn's end and its delivery loses nothing.

Every path into a channel uses it: a chat's rendered turns (`channels/kit/feed.py`), the
`message` tool and scheduled jobs (`DeliveryRouter`). When a channel (re)starts, what an earlier
daemon run left owed goes out once, with a short note when it is late. A message the platform
accepted is settled at once, so only a crash in that instant could send it twice; a message the
platform refused for good is settled too (with why), never retried forever.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from countbot.runtime.deliveries import ChannelSender
from countbot.store.outbox import OutboxStore

log = logging.getLogger(__name__)

# An owed message older than this says it is late when it finally goes out.
LATE_AFTER = 60.0
LATE_NOTE = "_(Sent late: CountBot restarted before this could be delivered.)_"
# Owed messages older than this are dropped: nobody wants last week's answer.
KEEP_FOR = 7 * 86400.0


class ChannelOutbox:
    """The daemon's outbox; `boot` tells this run's messages from those of runs before it."""

    def __init__(self, store: OutboxStore, *, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._clock = clock
        self.boot = uuid.uuid4().hex
        self._catching_up: dict[str, asyncio.Lock] = {}

    async def record(
        self, channel: str, chat_id: str, text: str, files: Sequence[Path] = ()
    ) -> int | None:
        """Write a message down as owed; None when the store failed (it is sent anyway)."""
        paths = tuple(str(path) for path in files)
        try:
            return await self._store.record(channel, chat_id, text, paths, self.boot, self._clock())
        except Exception:
            log.exception("an answer for %s:%s could not be written down", channel, chat_id)
            return None

    async def settle(self, entry: int | None, detail: str = "") -> None:
        """The message was delivered (or given up): it is never sent again."""
        if entry is None:
            return
        try:
            await self._store.settle(entry, self._clock(), detail)
        except Exception:
            log.exception("a delivered answer could not be marked as delivered")

    async def catch_up(self, sender: ChannelSender) -> None:
        """Send what earlier runs owe `sender`'s channel, once each, oldest first; stops at the
        first failure that may pass (the channel went down again: the next start goes on)."""
        lock = self._catching_up.setdefault(sender.name, asyncio.Lock())
        async with lock:
            now = self._clock()
            await self._store.forget(now - KEEP_FOR)
            for owed in await self._store.owed(sender.name, self.boot):
                late = now - owed.created_at > LATE_AFTER
                text = f"{owed.text}\n\n{LATE_NOTE}" if late and owed.text else owed.text
                result = await sender.send(owed.chat_id, text, [Path(p) for p in owed.files])
                if not result.delivered and result.retryable:
                    log.warning("an owed answer to %s waits: %s", sender.name, result.detail)
                    return
                if not result.delivered:
                    log.warning("an owed answer to %s was given up: %s", sender.name, result.detail)
                await self._store.settle(owed.id, self._clock(), result.detail)
