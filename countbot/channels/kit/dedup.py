"""Inbound de-duplication that survives restarts: platforms re-send events they think were not
handled (a reconnect, a restart, an IMAP message marked unread again), and each is answered once.

The key is what the platform guarantees unique within a chat (update, event or message id,
Message-ID), stored in SQLite before the turn is submitted; the platform's acknowledgement
follows only after that (the intake returns first). Keys are forgotten after `KEEP_FOR`, which
bounds the table: no platform re-sends an event that old.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

from countbot.store.channel_state import ChannelStateStore

KEEP_FOR = 7 * 86400.0
# Forgetting old keys rides along with a check at most this often.
PRUNE_EVERY = 3600.0


@dataclass(eq=False)
class ReceivedIds:
    """One channel's durable memory of what it received."""

    state: ChannelStateStore
    channel: str
    _: KW_ONLY
    keep_for: float = KEEP_FOR
    clock: Callable[[], float] = time.time
    _next_prune: float = field(default=0.0, init=False)

    async def first_time(self, chat_id: str, message_id: str) -> bool:
        """True only the first time this message arrives, in this run or any earlier one."""
        now = self.clock()
        forget_before = None
        if now >= self._next_prune:
            forget_before, self._next_prune = now - self.keep_for, now + PRUNE_EVERY
        key = f"{chat_id}\n{message_id}"
        return await self.state.first_time(self.channel, key, now, forget_before)
