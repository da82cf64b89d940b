"""Where a job's answer and its failure notices go.

A chat target goes through the delivery path, and counts as delivered only when the platform
said so. The web UI needs no sending: the job's turn ran in its session through the gateway, so
the answer is already in that session's history and streamed to everyone watching it; a notice
for the web becomes a note in that session (shown to people, never sent to the model).
"""

from __future__ import annotations

from typing import Any, Protocol

from countbot.agent.history import NoteEntry, to_record
from countbot.runtime.deliveries import DeliveryResult, DeliveryRouter, DeliveryTarget
from countbot.scheduler.jobs import Delivery


class SessionNotes(Protocol):
    """The store's SessionStore."""

    async def append(self, session_id: str, record: dict[str, Any]) -> int: ...


class JobDelivery:
    """Delivers answers and notices to a job's `Delivery` (see the module docstring)."""

    def __init__(self, deliveries: DeliveryRouter, sessions: SessionNotes) -> None:
        self._deliveries = deliveries
        self._sessions = sessions

    async def answer(self, delivery: Delivery, session_id: str, text: str) -> DeliveryResult:
        """Deliver a turn's final answer, which the turn already stored in `session_id`."""
        if not text.strip():
            return DeliveryResult(False, "the answer was empty")
        if delivery.kind == "web":
            return DeliveryResult(True, f"in session {session_id}")
        return await self._send(delivery, text)

    async def notice(self, delivery: Delivery, session_id: str, text: str) -> DeliveryResult:
        """Tell the target something about the job itself (such as repeated failures)."""
        if delivery.kind == "web":
            await self._sessions.append(session_id, to_record(NoteEntry(text)))
            return DeliveryResult(True, f"noted in session {session_id}")
        return await self._send(delivery, text)

    async def _send(self, delivery: Delivery, text: str) -> DeliveryResult:
        if delivery.channel is None or delivery.chat_id is None:
            return DeliveryResult(False, "the job delivers nowhere")
        return await self._deliveries.deliver(
            DeliveryTarget(delivery.channel, delivery.chat_id), text
        )
