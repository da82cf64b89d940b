"""Fan-out of session events to watchers, which never slow a turn down.

A watcher is one consumer (a WebSocket connection, a channel adapter) of any number of sessions.
Publishing puts each event on every watcher's bounded queue without waiting; a watcher whose
queue is full is dropped (its consumer closes, the client reconnects and replays from `last_seq`).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Collection
from typing import Any

from countbot.gateway.event_log import REPLAY_EVENTS, SessionLog
from countbot.gateway.events import GatewayEvent, SessionEvent

WATCHER_QUEUE = 4096

# What a watcher's queue holds: live events, and frames its surface queues itself (replies,
# replayed events already rendered) so everything reaches the consumer in one order.
WatcherItem = SessionEvent | dict[str, Any]
# Logs of sessions at rest (no turn under way, or nobody watching) are kept for replay, up to this
# many (least recent go first). A connection stays subscribed to every session it sent a message
# in: keeping those logs for it would grow with the sessions it touched (each a turn's events).
IDLE_LOGS = 64
# Sessions a watcher follows only because it sent a message in them, kept for it once at rest (the
# least recent go first). A tab left open over thousands of chats would otherwise hold a
# subscription to each; the sessions it shows it subscribes to itself, and those stay.
SENT_SESSIONS = 64


class Watcher:
    """One consumer's inbox: read `queue`; `dropped` is set when it fell too far behind."""

    def __init__(self, max_pending: int = WATCHER_QUEUE) -> None:
        self.queue: asyncio.Queue[WatcherItem] = asyncio.Queue(max_pending)
        self.dropped = asyncio.Event()

    def offer(self, event: WatcherItem) -> bool:
        if self.dropped.is_set():
            return False
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.dropped.set()
            return False
        return True


class EventHub:
    """Numbers every session event, remembers the recent ones and hands them to watchers."""

    def __init__(
        self,
        replay_events: int = REPLAY_EVENTS,
        idle_logs: int = IDLE_LOGS,
        sent_sessions: int = SENT_SESSIONS,
    ) -> None:
        self._replay_events = replay_events
        self._idle_logs = idle_logs
        self._sent_sessions = sent_sessions
        self._logs: OrderedDict[str, SessionLog] = OrderedDict()
        self._watchers: dict[str, list[Watcher]] = {}
        # Per watcher, the sessions it follows only as a sender, least recently sent in first.
        self._sent: dict[Watcher, OrderedDict[str, None]] = {}
        self._connected: set[Watcher] = set()
        self._high_water = 0

    def connect(self, watcher: Watcher) -> None:
        """Include `watcher` (a client connection) in every `broadcast` until it is dropped."""
        self._connected.add(watcher)

    def broadcast(self, frame: dict[str, Any]) -> None:
        """Offer a frame that concerns no one session (the session list, daemon status) to all."""
        for watcher in list(self._connected):
            if not watcher.offer(frame):
                self.drop(watcher)

    def publish(self, session_id: str, event: GatewayEvent) -> SessionEvent:
        numbered = self._log(session_id).append(event)
        self._logs.move_to_end(session_id)
        watchers = self._watchers.get(session_id)
        if watchers:
            for watcher in list(watchers):
                if not watcher.offer(numbered):
                    self.drop(watcher)
        return numbered

    def subscribe(self, session_id: str, watcher: Watcher, last_seq: int | None = None) -> bool:
        """Watch a session, first replaying (as viewer-neutral frames) what came after `last_seq`.

        Returns False when some of those events are gone (too old, or from before a restart):
        what is still buffered is replayed, and the watcher should reload the history.
        """
        self._watch(session_id, watcher)
        self._forget_sent(session_id, watcher)  # asked for: it stays until unsubscribed
        if last_seq is None:
            return True
        missed, complete = self._log(session_id).since(last_seq)
        for event in missed:
            if not watcher.offer(event.to_frame()):
                self.drop(watcher)
                break
        return complete

    def follow_sent(self, session_id: str, watcher: Watcher) -> None:
        """Subscribe the sender of a message to its session, unless it already watches it.

        Beyond their turns, only the `SENT_SESSIONS` sessions it sent in most recently are kept;
        one whose turn is under way stays besides.
        """
        if watcher in self._watchers.get(session_id, ()) and session_id not in self._sent.get(
            watcher, ()
        ):
            return  # subscribed by its own request: kept as it is
        self._watch(session_id, watcher)
        sent = self._sent.setdefault(watcher, OrderedDict())
        sent[session_id] = None
        sent.move_to_end(session_id)
        if len(sent) > self._sent_sessions:
            resting = [s for s in sent if s != session_id and not self._turn_open(s)]
            for old in resting[: len(resting) + 1 - self._sent_sessions]:
                self.unsubscribe(old, watcher)

    def replay_turn(
        self, session_id: str, watcher: Watcher, unstored: Collection[int] = ()
    ) -> None:
        """Send `watcher` what the running turn produced so far, each frame marked `replay`,
        after the earlier events numbered in `unstored` (messages no turn has stored yet).

        A page opened mid-answer gets the stored history over REST, which holds the turn's user
        message but not the text streamed since; this fills the gap before live events follow.
        """
        log = self._logs.get(session_id)
        for event in log.running_turn(unstored) if log is not None else ():
            if not watcher.offer({**event.to_frame(), "replay": True}):
                self.drop(watcher)
                return

    def unsubscribe(self, session_id: str, watcher: Watcher) -> None:
        self._forget_sent(session_id, watcher)
        watchers = self._watchers.get(session_id)
        if watchers and watcher in watchers:
            watchers.remove(watcher)
            if not watchers:
                del self._watchers[session_id]

    def drop(self, watcher: Watcher) -> None:
        """Remove `watcher` from every session (it disconnected or fell behind)."""
        self._connected.discard(watcher)
        self._sent.pop(watcher, None)
        for session_id in [s for s, ws in self._watchers.items() if watcher in ws]:
            self.unsubscribe(session_id, watcher)

    def watching(self, session_id: str) -> int:
        return len(self._watchers.get(session_id, ()))

    def _watch(self, session_id: str, watcher: Watcher) -> None:
        watchers = self._watchers.setdefault(session_id, [])
        if watcher not in watchers:
            watchers.append(watcher)

    def _forget_sent(self, session_id: str, watcher: Watcher) -> None:
        sent = self._sent.get(watcher)
        if sent is not None:
            sent.pop(session_id, None)
            if not sent:
                del self._sent[watcher]

    def _turn_open(self, session_id: str) -> bool:
        log = self._logs.get(session_id)
        return log is not None and log.turn_open

    def _log(self, session_id: str) -> SessionLog:
        log = self._logs.get(session_id)
        if log is None:
            first = max(time.time_ns() // 1_000_000, self._high_water + 1)
            log = self._logs[session_id] = SessionLog(session_id, first, self._replay_events)
            self._evict_idle()
        return log

    def _evict_idle(self) -> None:
        """Drop the least recent logs at rest beyond `idle_logs`. A watcher of a dropped log
        still gets its session's next events (numbered after every earlier one); a client that
        reconnects with an older `last_seq` is told to reload the history, which is stored."""
        idle = [s for s, log in self._logs.items() if not log.turn_open or s not in self._watchers]
        for session_id in idle[: max(0, len(idle) - self._idle_logs)]:
            self._high_water = max(self._high_water, self._logs.pop(session_id).last_seq)
