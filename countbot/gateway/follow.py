"""Following one submitted turn to its end in a session's event stream (jobs, subagent reports)."""

from __future__ import annotations

from collections.abc import Callable

from countbot.agent.events import TERMINAL_TYPES
from countbot.gateway.events import GatewayEvent, MessageAccepted, SessionEvent
from countbot.gateway.watchers import Watcher


class TurnFollower:
    """Finds our turn's terminal event in the session's stream.

    Turns in a lane finish in the order their messages were accepted; a message accepted after
    we started watching but before ours (a race with a chat message) runs first, so its terminal
    event is skipped.
    """

    def __init__(
        self, watcher: Watcher, on_event: Callable[[GatewayEvent], None] | None = None
    ) -> None:
        """`on_event` sees our turn's other events (a job notes denied approvals from them)."""
        self._watcher = watcher
        self._on_event = on_event
        self._others = 0
        self._ahead: int | None = None

    @property
    def ours_running(self) -> bool:
        return self._ahead == 0

    async def terminal(self, queued: bool) -> GatewayEvent:
        """Our turn's done, error or cancelled event; `queued` as the submission said."""
        while True:
            item = await self._watcher.queue.get()
            if not isinstance(item, SessionEvent):
                continue
            event = item.event
            if isinstance(event, MessageAccepted):
                if event.origin is self._watcher:
                    self._ahead = self._others or int(queued)
                elif self._ahead is None:
                    self._others += 1
            elif event.type in TERMINAL_TYPES:
                if self._ahead is None:
                    self._others = max(0, self._others - 1)
                elif self._ahead > 0:
                    self._ahead -= 1
                else:
                    return event
            elif self.ours_running and self._on_event is not None:
                self._on_event(event)
