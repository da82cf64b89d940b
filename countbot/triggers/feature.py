"""Wires the triggers into a daemon (`runtime.features.Feature`).

The daemon opens its runtime with a `TriggersFeature` (the ledger over the runtime's database,
bound when it opens; the triggers offer no tools), calls `start` once its gateway exists (the
dispatcher resumes what an earlier run left, the watchers start) and, when it stops,
`Triggers.stop_taking` before the gateway closes and `Triggers.close` after (turns the shutdown
ended settle, or go back to received). Routes: `web/api/triggers.py`, bound to `Triggers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from countbot.config.settings import TriggersSettings
from countbot.gateway.gateway import Gateway
from countbot.runtime.features import FeaturePorts, SharedPorts
from countbot.triggers import webhooks
from countbot.triggers.dispatcher import Describe, Dispatcher
from countbot.triggers.events import TriggerEvents
from countbot.triggers.webhooks import HookDoor

if TYPE_CHECKING:
    from countbot.tools.base import Tool


class TriggerSource(Protocol):
    """A source that watches something (a folder, a mailbox) until stopped."""

    name: str

    async def stop(self) -> None: ...


@dataclass(slots=True)
class Triggers:
    """A daemon's running triggers: the ledger, the dispatcher, the webhook door, the watchers."""

    events: TriggerEvents
    dispatcher: Dispatcher
    hooks: HookDoor
    watchers: list[TriggerSource] = field(default_factory=list)

    async def stop_taking(self) -> None:
        """Take no more events (the daemon stops; what is recorded runs after its next start)."""
        self.dispatcher.stop_taking()
        for watcher in self.watchers:
            await watcher.stop()

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
        ports, events = self._ports, self._events
        settings, workspace = ports.settings.triggers, ports.settings.workspace
        describe: dict[str, Describe] = {"hook": webhooks.describe_delivery}
        # The document reader and the mail pieces are imported only when they are used.
        if settings.folders:
            from countbot.triggers.folders import FolderReader

            describe["folder"] = FolderReader(settings, workspace).describe
        if settings.mailboxes:
            from countbot.triggers import mail

            describe["mailbox"] = mail.describe_mail
        live = ports.settings  # a change to `triggers` replaces the section on this object

        def now() -> TriggersSettings:
            return live.triggers

        dispatcher = Dispatcher(events, gateway, now, ports.deliveries, describe)
        await dispatcher.start()
        running = Triggers(events, dispatcher, HookDoor(now, events, dispatcher))
        if settings.folders:
            running.watchers.extend(await _watch_folders(settings, workspace, events, dispatcher))
        if settings.mailboxes:
            running.watchers.extend(await _watch_mailboxes(settings, ports, events, dispatcher))
        return running


async def _watch_folders(
    settings: TriggersSettings, workspace: Path, events: TriggerEvents, dispatcher: Dispatcher
) -> list[TriggerSource]:
    from countbot.triggers.folders import FolderTrigger, folder_path

    started: list[TriggerSource] = []
    for name, folder in settings.folders.items():
        if folder.enabled:
            watcher = FolderTrigger(
                name, folder, folder_path(folder, workspace), events, dispatcher
            )
            await watcher.start()
            started.append(watcher)
    return started


async def _watch_mailboxes(
    settings: TriggersSettings, ports: SharedPorts, events: TriggerEvents, dispatcher: Dispatcher
) -> list[TriggerSource]:
    from countbot.store.channel_state import ChannelStateStore
    from countbot.triggers.mail import MailboxTrigger

    cursors = ChannelStateStore(ports.db)
    started: list[TriggerSource] = []
    for name, mailbox in settings.mailboxes.items():
        if mailbox.enabled:
            watcher = MailboxTrigger(name, mailbox, events, cursors, dispatcher)
            await watcher.start()
            started.append(watcher)
    return started
