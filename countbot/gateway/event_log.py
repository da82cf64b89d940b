"""Per-session event numbering and a bounded ring buffer, so a reconnecting client can catch up."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Collection

from countbot.agent.events import TERMINAL_TYPES
from countbot.gateway.events import GatewayEvent, SessionEvent

REPLAY_EVENTS = 2000


class SessionLog:
    """A session's recent events, numbered from `first_seq` without gaps.

    Numbering starts at a caller-chosen value (the daemon uses a clock reading) so a client's
    `last_seq` from before a restart can never be mistaken for a position in the new stream.
    """

    def __init__(self, session_id: str, first_seq: int, size: int = REPLAY_EVENTS) -> None:
        self.session_id = session_id
        self._ring: deque[SessionEvent] = deque(maxlen=size)
        self._next = first_seq
        # Whether a turn is under way: a message came in and no done/error/cancelled since.
        self.turn_open = False

    @property
    def last_seq(self) -> int:
        """The newest event's number (one less than the first when there is none yet)."""
        return self._next - 1

    def append(self, event: GatewayEvent) -> SessionEvent:
        numbered = SessionEvent(self.session_id, self._next, event)
        self._next += 1
        self._ring.append(numbered)
        if event.type in TERMINAL_TYPES:
            self.turn_open = False
        elif event.type != "subagent":  # a subagent's news is not part of the chat's turn
            self.turn_open = True
        return numbered

    def since(self, last_seq: int) -> tuple[list[SessionEvent], bool]:
        """The buffered events after `last_seq`, and whether that is all of them.

        Incomplete when the oldest were pushed out of the buffer or `last_seq` is not from this
        stream (a restart); then every buffered event is returned.
        """
        if last_seq > self.last_seq:
            return list(self._ring), False
        first = self._ring[0].seq if self._ring else self._next
        if last_seq < first - 1:
            return list(self._ring), False
        return list(itertools.islice(self._ring, last_seq - first + 1, None)), True

    def running_turn(self, also: Collection[int] = ()) -> list[SessionEvent]:
        """The buffered events after the newest done/error/cancelled (the running turn so far),
        after the earlier ones numbered in `also` (messages accepted before that end)."""
        tail: list[SessionEvent] = []
        earlier: list[SessionEvent] = []
        oldest = min(also, default=self._next)
        ended = False
        for numbered in reversed(self._ring):
            ended = ended or numbered.event.type in TERMINAL_TYPES
            if not ended:
                tail.append(numbered)
            elif numbered.seq < oldest:
                break
            elif numbered.seq in also:
                earlier.append(numbered)
        tail.reverse()
        earlier.reverse()
        return earlier + tail
