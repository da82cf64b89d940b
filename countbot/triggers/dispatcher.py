"""Runs the ledger's events: one worker per trigger, oldest first, each event's turn once.

The ledger is the queue. A source records an event and pokes the dispatcher; the trigger's worker
claims the oldest received row (marking it running), runs its turn through the gateway with the
trigger's tools, delivers the answer where the trigger says and settles the row as delivered or
failed, with the reason. At start the rows an earlier run left are resumed. When the daemon
stops, a turn the shutdown cut off goes back to received, so the next start runs it (once more).

An event waiting longer than `ALARM_AFTER` while the daemon is up is an alarm: logged, and listed
for the web UI (a worker that hangs, or a trigger flooded faster than its turns end).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from countbot.config.settings import TriggerSettings, TriggersSettings
from countbot.gateway.gateway import Gateway, GatewayClosedError
from countbot.runtime.deliveries import DeliveryRouter, DeliveryTarget
from countbot.triggers.events import MAX_ATTEMPTS, TriggerEvent, TriggerEvents
from countbot.triggers.payload import turn_input
from countbot.triggers.turns import TriggerOutcome, run_turn, session_of

log = logging.getLogger(__name__)

# What a trigger's turn may use unless the trigger names its tools: reading, nothing more.
READ_ONLY_TOOLS = frozenset(
    {"read_file", "list_dir", "memory_read", "memory_search", "read_skill", "read_result"}
)
ALARM_AFTER = 60.0
# How often a running daemon drops events past the ledger's 30 days (besides at each start).
FORGET_EVERY = 86400.0

# A source's words for one of its events: (a heading, the data) for the turn.
Describe = Callable[[TriggerEvent], Awaitable[tuple[str, str]]]


@dataclass(frozen=True, slots=True)
class Alarm:
    event_id: int
    trigger: str
    waiting: float


def find_trigger(settings: TriggersSettings, name: str) -> TriggerSettings | None:
    """The trigger called `name`, whatever its kind (names are unique across kinds)."""
    for section in (settings.hooks, settings.folders, settings.mailboxes):
        found: TriggerSettings | None = section.get(name)
        if found is not None:
            return found
    return None


def tools_of(trigger: TriggerSettings) -> frozenset[str]:
    """The tools a trigger's turns may use; `read_result` always (pages of their own results)."""
    if trigger.tools is None:
        return READ_ONLY_TOOLS
    return frozenset(trigger.tools) | {"read_result"}


class Dispatcher:
    """See the module docstring; `describe` holds each source kind's words for its events and
    `settings` gives the triggers as configured now (a hook added in the web UI applies at once)."""

    def __init__(
        self,
        events: TriggerEvents,
        gateway: Gateway,
        settings: Callable[[], TriggersSettings],
        deliveries: DeliveryRouter,
        describe: Mapping[str, Describe],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._events = events
        self._gateway = gateway
        self._settings = settings
        self._deliveries = deliveries
        self._describe = describe
        self._clock = clock
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._poked: set[str] = set()
        # Received events not yet claimed, and since when (the alarm's watch).
        self._waiting: dict[int, tuple[str, float]] = {}
        self._alarm_timer: asyncio.TimerHandle | None = None
        self._raised: set[int] = set()
        self._closing = False
        self._forgot_at = 0.0

    async def start(self) -> None:
        """Resume what an earlier run left received or running."""
        now = self._forgot_at = self._clock()
        await self._events.resume(now)
        for event in await self._events.waiting_since(float("inf")):
            # The alarm counts the time waited while a daemon was up: from now, for these.
            self.received(event.id, event.trigger, max(event.received_at, now))

    def received(self, event_id: int, trigger: str, at: float) -> None:
        """A source recorded an event: watch it until a worker claims it, and wake the worker."""
        self._waiting[event_id] = (trigger, at)
        if self._alarm_timer is None:
            self._alarm_timer = asyncio.get_running_loop().call_later(ALARM_AFTER, self._look)
        self.poke(trigger)

    def poke(self, trigger: str) -> None:
        if self._closing:
            return
        self._poked.add(trigger)
        if trigger not in self._workers:
            self._workers[trigger] = asyncio.create_task(
                self._work(trigger), name=f"trigger:{trigger}"
            )

    async def again(self, event_id: int) -> TriggerEvent | None:
        """Run an event once more, as a new event with its payload ("run again")."""
        event = await self._events.again(event_id, self._clock())
        if event is not None:
            self.received(event.id, event.trigger, event.received_at)
        return event

    def alarms(self) -> list[Alarm]:
        """Events received more than `ALARM_AFTER` seconds ago and still not started."""
        now = self._clock()
        return [
            Alarm(event_id, trigger, now - at)
            for event_id, (trigger, at) in self._waiting.items()
            if now - at > ALARM_AFTER
        ]

    def stop_taking(self) -> None:
        """Claim no more events (the daemon stops; what waits runs after the next start)."""
        self._closing = True
        if self._alarm_timer is not None:
            self._alarm_timer.cancel()

    async def close(self, grace: float) -> None:
        """Let running events settle (the gateway ended their turns) within `grace` s."""
        self.stop_taking()
        workers = list(self._workers.values())
        if workers:
            _, late = await asyncio.wait(workers, timeout=grace)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)

    # --- the workers -------------------------------------------------------------------------

    async def _work(self, trigger: str) -> None:
        try:
            while not self._closing:
                self._poked.discard(trigger)
                event = await self._events.claim(trigger, self._clock())
                if event is None:
                    if trigger in self._poked:
                        continue  # poked while we looked: look again
                    return
                self._waiting.pop(event.id, None)
                await self._run_safely(event)
                if self._clock() - self._forgot_at > FORGET_EVERY:  # a daemon up for months
                    self._forgot_at = self._clock()
                    await self._events.forget(self._forgot_at)
        finally:
            self._workers.pop(trigger, None)

    async def _run_safely(self, event: TriggerEvent) -> None:
        try:
            await self._run(event)
        except GatewayClosedError:
            await self._events.release(event.id)  # never started: the next start runs it
        except Exception as exc:  # one bad event must not stop its trigger
            log.exception("trigger %s: event %s failed", event.trigger, event.id)
            await self._fail(event, f"internal error: {exc}")

    async def _run(self, event: TriggerEvent) -> None:
        trigger = find_trigger(self._settings(), event.trigger)
        if trigger is None or not trigger.enabled:
            await self._fail(event, "the trigger is no longer configured or is switched off")
            return
        if event.attempts > MAX_ATTEMPTS:
            await self._fail(event, f"stopped by restarts {event.attempts - 1} times")
            return
        heading, data = await self._describe[event.kind](event)
        given = turn_input(trigger.prompt, event.kind, event.trigger, heading, data)
        outcome = await run_turn(self._gateway, event.trigger, given, tools_of(trigger))
        if not outcome.ok and self._closing:
            await self._events.release(event.id)  # cut off by the shutdown: the next start
            return
        if not outcome.ok:
            await self._fail(event, outcome.error)
            return
        await self._events.answered(event.id, outcome.text)  # never run again from here on
        delivered, detail = await self._deliver(trigger, event.trigger, outcome)
        status = "delivered" if delivered else "failed"
        await self._events.finish(event.id, status, detail, outcome.text, self._clock())

    async def _deliver(
        self, trigger: TriggerSettings, name: str, outcome: TriggerOutcome
    ) -> tuple[bool, str]:
        target = trigger.deliver
        if not target or target == "web":
            return True, f"kept in session {session_of(name)}"
        if not outcome.text.strip():
            return True, "the answer was empty: nothing was sent"
        channel, _, chat_id = target.partition(":")
        result = await self._deliveries.deliver(DeliveryTarget(channel, chat_id), outcome.text)
        return result.delivered, result.detail or ("sent" if result.delivered else "not sent")

    async def _fail(self, event: TriggerEvent, reason: str) -> None:
        log.warning("trigger %s: event %s failed: %s", event.trigger, event.id, reason)
        await self._events.finish(event.id, "failed", reason, "", self._clock())

    # --- the alarm ---------------------------------------------------------------------------

    def _look(self) -> None:
        """Log each event newly waiting too long; look again while any waits (no timer while
        nothing does: an idle daemon does no work for this)."""
        self._alarm_timer = None
        for alarm in self.alarms():
            if alarm.event_id not in self._raised:
                self._raised.add(alarm.event_id)
                log.warning(
                    "trigger %s: event %s has waited %.0f s without starting",
                    alarm.trigger,
                    alarm.event_id,
                    alarm.waiting,
                )
        self._raised &= set(self._waiting)
        if self._waiting and not self._closing:
            self._alarm_timer = asyncio.get_running_loop().call_later(ALARM_AFTER / 4, self._look)
