"""The outbound path: how anything (the `message` tool, scheduled jobs) sends to a channel.

Channels register a sender when they start; callers deliver to a `DeliveryTarget`. A result says
what the platform really answered, so nothing is reported delivered that did not arrive.
"""

from __future__ import annotations

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
    """What a channel offers the outbound path."""

    name: str

    async def send(self, chat_id: str, text: str, files: Sequence[Path] = ()) -> DeliveryResult: ...


class OutboundRouter:
    """Routes deliveries to the sender registered for the target's channel."""

    def __init__(self) -> None:
        self._senders: dict[str, ChannelSender] = {}

    def register(self, sender: ChannelSender) -> None:
        self._senders[sender.name] = sender

    def unregister(self, name: str) -> None:
        self._senders.pop(name, None)

    def channels(self) -> list[str]:
        return sorted(self._senders)

    async def deliver(
        self, target: DeliveryTarget, text: str, files: Sequence[Path] = ()
    ) -> DeliveryResult:
        sender = self._senders.get(target.channel)
        if sender is None:
            known = ", ".join(self.channels()) or "none"
            return DeliveryResult(
                False, f"channel {target.channel!r} is not running (running: {known})"
            )
        try:
            result = await sender.send(target.chat_id, text, files)
        except Exception as exc:  # a sender bug must not look like a delivery
            log.exception("delivery to %s:%s failed", target.channel, target.chat_id)
            return DeliveryResult(False, f"send failed: {exc}")
        if not result.delivered:
            log.warning(
                "delivery to %s:%s failed: %s", target.channel, target.chat_id, result.detail
            )
        return result
