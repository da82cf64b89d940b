"""Session lanes: one turn at a time per session, and what happens to messages that arrive mid-turn.

A lane's worker runs the waiting messages in order and exits when none are left; the gateway
drops idle lanes, so a session costs nothing between turns.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from countbot.agent.cancel import CancelToken
from countbot.gateway.messages import InboundMessage, QueueMode
from countbot.gateway.steering import SteeringBox

log = logging.getLogger(__name__)


@dataclass(slots=True)
class RunningTurn:
    """The turn a lane is running: what reaches it (cancel, steering) and how it ended."""

    message: InboundMessage
    token: CancelToken = field(default_factory=CancelToken)
    steering: SteeringBox = field(default_factory=SteeringBox)
    # A terminal event (done, error, cancelled) was published for it.
    ended: bool = False
    # The lane gave up waiting for it; anything it still produces is discarded.
    silenced: bool = False
    task: asyncio.Task[None] | None = None


TurnRunner = Callable[[str, RunningTurn], Awaitable[None]]


class SessionLane:
    """The waiting messages of one session and the worker that runs them one by one."""

    def __init__(
        self, session_id: str, run_turn: TurnRunner, on_idle: Callable[[SessionLane], None]
    ) -> None:
        self.session_id = session_id
        self.running: RunningTurn | None = None
        self._run_turn = run_turn
        self._on_idle = on_idle
        self._waiting: deque[InboundMessage] = deque()
        self._worker: asyncio.Task[None] | None = None
        self._closed = False
        # The event number of each message's acceptance, by message identity, while the lane
        # holds it: a page opened before its turn stored it replays it from there.
        self._accepted_at: dict[int, int] = {}

    @property
    def busy(self) -> bool:
        return self.running is not None or bool(self._waiting)

    @property
    def worker(self) -> asyncio.Task[None] | None:
        return self._worker

    def submit(self, message: InboundMessage, mode: QueueMode) -> bool:
        """Run `message` now or apply `mode`; returns whether it had to wait for another turn.

        steer: the running turn reads it before its next model call (images cannot be steered
        in, so a message with media waits like a followup); interrupt: it goes first in line
        and the running turn is cancelled; followup: it waits its turn.
        """
        queued = self.busy
        if queued and mode == "steer" and self.running is not None and not message.media:
            self.running.steering.put(message)
        elif queued and mode == "interrupt":
            self._waiting.appendleft(message)
            if self.running is not None:
                self.running.token.cancel("interrupted by a new message")
        else:
            self._waiting.append(message)
        if self._worker is None:
            self._worker = asyncio.create_task(self._work(), name=f"lane:{self.session_id}")
        return queued

    def accepted(self, message: InboundMessage, seq: int) -> None:
        """Note the event that announced `message` (while it waits or runs here)."""
        if message is self._current() or any(m is message for m in self._waiting):
            self._accepted_at[id(message)] = seq

    def unstored_seqs(self) -> list[int]:
        """The acceptance events of the messages waiting here or running without an end yet:
        their turns may not have stored them, so only these events show them."""
        held = [self._current(), *self._waiting]
        return sorted(self._accepted_at[id(m)] for m in held if id(m) in self._accepted_at)

    def _current(self) -> InboundMessage | None:
        running = self.running
        return running.message if running is not None and not running.ended else None

    def cancel(self, reason: str = "cancelled by the user") -> bool:
        """Cancel the running turn and drop the messages waiting behind it (stop, or shutdown).

        Returns False when no turn was running.
        """
        self._drop_waiting()
        if self.running is None or self.running.token.cancelled:
            return False
        self.running.steering.take_back()
        self.running.token.cancel(reason)
        return True

    def close(self) -> None:
        """Start nothing more: drop the waiting messages; the running turn may finish."""
        self._closed = True
        self._drop_waiting()

    def _drop_waiting(self) -> None:
        for message in self._waiting:
            self._accepted_at.pop(id(message), None)
        self._waiting.clear()

    async def _work(self) -> None:
        try:
            while self._waiting and not self._closed:
                turn = RunningTurn(self._waiting.popleft())
                self.running = turn
                try:
                    await self._run_turn(self.session_id, turn)
                except Exception:  # a broken turn must not strand the messages behind it
                    log.exception("turn runner failed in session %s", self.session_id)
                finally:
                    self.running = None
                    self._accepted_at.pop(id(turn.message), None)
                # Steered messages the turn never read become the next turns, in order.
                self._waiting.extendleft(reversed(turn.steering.take_back()))
        finally:
            self._worker = None
            self._on_idle(self)
