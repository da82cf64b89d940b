"""Wires the triggers into a daemon (`runtime.features.Feature`).

The daemon opens its runtime with a `TriggersFeature` (the ledger over the runtime's database,
bound when it opens; the triggers offer no tools), calls `start` once its gateway exists (the
dispatcher resumes what an earlier run left, the watchers start) and, when it stops,
`Triggers.stop_taking` before the gateway closes and `Triggers.close` after (turns the shutdown
ended settle, or go back to received). Routes: `web/api/triggers.py`, bound to `Triggers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from countbot.gateway.gateway import Gateway
from countbot.runtime.features import FeaturePorts, SharedPorts
from countbot.triggers import webhooks
from countbot.triggers.dispatcher import Dispatcher
from countbot.triggers.events import TriggerEvents
from countbot.triggers.webhooks import HookDoor

if TYPE_CHECKING:
    from countbot.tools.base import Tool


@dataclass(slots=True)
class Triggers:
    """A daemon's running triggers: the ledger, the dispatcher and the webhook door."""

    events: TriggerEvents
    dispatcher: Dispatcher
    hooks: HookDoor

    def stop_taking(self) -> None:
        self.dispatcher.stop_taking()

    async def close(self, grace: float) -> None:
        await self.dispatcher.close(grace)


class TriggersFeature:
    """Implements `runtime.features.Feature` for the triggers (see the module docstring)."""

    def __init__(self) -> None:
        self._ports: SharedPorts | None = None
        self._events: TriggerEvents | None = None

    def bind(self, ports: SharedPorts) -> TriggerEvents:
        self._ports = ports
        self._events = TriggerEvents(ports.db)
        return self._events

    def tools(self, ports: FeaturePorts) -> Sequence[Tool]:
        return ()

    async def start(self, gateway: Gateway) -> Triggers:
        """Resume the ledger's unfinished events and open the doors."""
        if self._ports is None or self._events is None:
            raise RuntimeError("open the runtime with this feature first")
        settings = self._ports.settings.triggers
        describe = {"hook": webhooks.describe}
        dispatcher = Dispatcher(self._events, gateway, settings, self._ports.outbound, describe)
        await dispatcher.start()
        return Triggers(self._events, dispatcher, HookDoor(settings, self._events, dispatcher))
