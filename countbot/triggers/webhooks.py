"""The webhook door: a signed `POST /hooks/<name>` becomes a recorded event, or a clear refusal.

Checks run cheapest first and nothing unchecked gets further: the hook must exist (404), the
body fit its limit (413; `web/body_limits.py` refuses a declared length before reading), the
signature and its timestamp check out (401), and only then is the body parsed (400 for malformed
JSON). An accepted delivery is recorded before the answer (`202`: durable from then on); a
delivery id already recorded is acknowledged (`200`) and not run again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from countbot.config.settings import HookSettings, TriggersSettings
from countbot.text.text_repair import JsonTextError, loads_untrusted
from countbot.triggers.dispatcher import Dispatcher
from countbot.triggers.events import TriggerEvent, TriggerEvents
from countbot.triggers.payload import readable_json
from countbot.triggers.signatures import SignatureRefused, verify

# Bodies up to this size are parsed on the event loop; larger ones in a worker thread.
PARSE_INLINE = 64 * 1024


class HookRefused(Exception):
    """The request does not start a turn: the HTTP status and why."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


@dataclass(frozen=True, slots=True)
class Accepted:
    """A recorded delivery: its event id; `duplicate` when the id was recorded before."""

    event_id: int
    duplicate: bool


class HookDoor:
    """Checks and records webhook deliveries for the dispatcher (see the module docstring);
    `settings` gives the triggers as configured now."""

    def __init__(
        self,
        settings: Callable[[], TriggersSettings],
        events: TriggerEvents,
        dispatcher: Dispatcher,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._settings = settings
        self._events = events
        self._dispatcher = dispatcher
        self._clock = clock

    def hook(self, name: str) -> HookSettings:
        """The enabled hook called `name`; `HookRefused` (404) when there is none."""
        hook = self._settings().hooks.get(name)
        if hook is None or not hook.enabled:
            raise HookRefused(404, f"no webhook named {name!r}")
        return hook

    async def accept(self, name: str, headers: Mapping[str, str], body: bytes) -> Accepted:
        """Record the delivery (`headers` by lower-case name); `HookRefused` says why not."""
        hook = self.hook(name)
        settings = self._settings()
        limit = settings.max_body_bytes
        if len(body) > limit:
            raise HookRefused(413, f"request body too large (limit {limit:,} bytes)")
        now = self._clock()
        try:
            signed = verify(
                hook.scheme,
                hook.secret.get_secret_value(),
                headers,
                body,
                now=now,
                tolerance=settings.tolerance_seconds,
            )
        except SignatureRefused as exc:
            raise HookRefused(401, str(exc)) from None
        try:
            data = loads_untrusted(body) if len(body) <= PARSE_INLINE else await _parsed(body)
        except JsonTextError as exc:
            raise HookRefused(400, str(exc)) from None
        payload = {"delivery": signed.delivery_id, "event": signed.event, "body": data}
        recorded = await self._events.record(name, "hook", signed.delivery_id, payload, now)
        if recorded.new:
            self._dispatcher.received(recorded.id, name, now)
        return Accepted(recorded.id, not recorded.new)


async def _parsed(body: bytes) -> object:
    return await asyncio.to_thread(loads_untrusted, body)


async def describe_delivery(event: TriggerEvent) -> tuple[str, str]:
    """A delivery as its turn reads it: which one, and the JSON it carried."""
    payload = event.payload
    what = f", event {payload['event']!r}" if payload.get("event") else ""
    heading = f"Webhook {event.trigger!r} delivery {payload['delivery']!r}{what}; its JSON body:"
    return heading, readable_json(payload["body"])
