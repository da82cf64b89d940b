"""The delivery path: how anything (the `message` tool, scheduled jobs) sends to a channel.

Channels register a sender when they start; callers deliver to a `DeliveryTarget`. A result says
what the platform really answered, so nothing is reported delivered that did not arrive.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DeliveryTarget:
    channel: str
    chat_id: str


@dataclass(frozen=True, slots=True)
class DeliveryResult:
    delivered: bool
    detail: str = ""
    message_ids: tuple[str, ...] = ()
    retryable: bool = False


class ChannelSender(Protocol):
    """What a channel offers the delivery path."""

    name: str

    async def send(self, chat_id: str, text: str, files: Sequence[Path] = ()) -> DeliveryResult: ...


class Outbox(Protocol):
    """Where what a channel owes a chat is written down until delivered (`runtime/outbox.py`)."""

    async def record(
        self, channel: str, chat_id: str, text: str, files: Sequence[Path] = ()
    ) -> int | None: ...

    async def settle(self, entry: int | None, detail: str = "") -> None: ...

    async def catch_up(self, sender: ChannelSender) -> None: ...


class DeliveryRouter:
    """Routes deliveries to the sender registered for the target's channel.

    A channel that is enabled but still connecting (or restarting after a crash) is `expect`ed:
    a delivery waits up to `connect_wait` seconds for it instead of failing at once, so a job
    due right at start-up still reaches the user.
    """

    def __init__(self, connect_wait: float = 30.0, outbox: Outbox | None = None) -> None:
        """With an `outbox`, what is sent is written down first and settled once accepted."""
        self._senders: dict[str, ChannelSender] = {}
        self._arrived: dict[str, asyncio.Event] = {}
        self._connect_wait = connect_wait
        self.outbox = outbox

    def expect(self, name: str) -> None:
        self._arrived.setdefault(name, asyncio.Event())

    def forget(self, name: str) -> None:
        """The channel is stopped for good: deliveries to it fail at once again."""
        self._arrived.pop(name, None)
        self._senders.pop(name, None)

    def register(self, sender: ChannelSender) -> None:
        self._senders[sender.name] = sender
        self.expect(sender.name)
        self._arrived[sender.name].set()

    def unregister(self, name: str) -> None:
        self._senders.pop(name, None)
        if name in self._arrived:
            self._arrived[name].clear()

    def channels(self) -> list[str]:
        return sorted(self._senders)

    async def deliver(
        self, target: DeliveryTarget, text: str, files: Sequence[Path] = ()
    ) -> DeliveryResult:
        sender = await self._sender(target.channel)
        if sender is None:
            known = ", ".join(self.channels()) or "none"
            return DeliveryResult(
                False, f"channel {target.channel!r} is not running (running: {known})"
            )
        outbox = self.outbox
        entry = await outbox.record(target.channel, target.chat_id, text, files) if outbox else None
        try:
            result = await sender.send(target.chat_id, text, files)
        except Exception as exc:  # a sender bug must not look like a delivery
            log.exception("delivery to %s:%s failed", target.channel, target.chat_id)
            result = DeliveryResult(False, f"send failed: {exc}")
        if outbox is not None and (result.delivered or not result.retryable):
            await outbox.settle(entry, result.detail)
        if not result.delivered:
            log.warning(
                "delivery to %s:%s failed: %s", target.channel, target.chat_id, result.detail
            )
        return result

    async def _sender(self, name: str) -> ChannelSender | None:
        arrived = self._arrived.get(name)
        if name not in self._senders and arrived is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(arrived.wait(), self._connect_wait)
        return self._senders.get(name)
