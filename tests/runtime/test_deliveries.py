"""The delivery path reports what really happened, waits for a channel that is connecting, and
owes what it could not deliver until a later run sends it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from countbot.runtime.deliveries import DeliveryResult, DeliveryRouter, DeliveryTarget
from countbot.runtime.outbox import LATE_NOTE, ChannelOutbox
from countbot.store.database import Database
from countbot.store.outbox import OutboxStore


class Recorder:
    name = "chat"

    def __init__(self, answer: DeliveryResult | Exception) -> None:
        self.answer = answer
        self.sent: list[tuple[str, str]] = []

    async def send(self, chat_id: str, text: str, files: Sequence[Path] = ()) -> DeliveryResult:
        self.sent.append((chat_id, text))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


async def test_unknown_channel_is_not_delivered() -> None:
    result = await DeliveryRouter().deliver(DeliveryTarget("chat", "1"), "hi")
    assert not result.delivered and "not running" in result.detail


async def test_a_sender_crash_is_a_failed_delivery() -> None:
    router = DeliveryRouter()
    router.register(Recorder(RuntimeError("socket closed")))
    result = await router.deliver(DeliveryTarget("chat", "1"), "hi")
    assert not result.delivered and "socket closed" in result.detail


async def test_delivery_waits_for_an_expected_channel_to_connect() -> None:
    router = DeliveryRouter(connect_wait=5)
    router.expect("chat")
    sender = Recorder(DeliveryResult(True, "sent", ("7",)))
    pending = asyncio.create_task(router.deliver(DeliveryTarget("chat", "1"), "good morning"))
    await asyncio.sleep(0.05)
    assert not pending.done()
    router.register(sender)
    result = await pending
    assert result.delivered and sender.sent == [("1", "good morning")]


async def test_a_restarting_channel_is_waited_for_and_a_stopped_one_is_not() -> None:
    router = DeliveryRouter(connect_wait=5)
    sender = Recorder(DeliveryResult(True, "sent"))
    router.register(sender)
    router.unregister("chat")  # crashed; the manager restarts it
    pending = asyncio.create_task(router.deliver(DeliveryTarget("chat", "1"), "hi"))
    await asyncio.sleep(0.05)
    router.register(sender)
    assert (await pending).delivered
    router.forget("chat")
    assert not (await router.deliver(DeliveryTarget("chat", "1"), "hi")).delivered


async def test_a_delivery_the_channel_could_not_take_goes_out_once_after_a_restart(
    tmp_path: Path,
) -> None:
    """A scheduled job's message to a channel that is down is owed; the next daemon run sends
    it once (late ones say so), and a run after that owes nothing."""
    db = await Database.open(tmp_path / "countbot.db")
    try:
        clock = [1000.0]
        first_run = DeliveryRouter(outbox=ChannelOutbox(OutboxStore(db), clock=lambda: clock[0]))
        first_run.register(Recorder(DeliveryResult(False, "network down", retryable=True)))
        assert not (await first_run.deliver(DeliveryTarget("chat", "1"), "Good morning!")).delivered
        refused = Recorder(DeliveryResult(False, "blocked", retryable=False))
        first_run.register(refused)
        await first_run.deliver(DeliveryTarget("chat", "2"), "never again")

        clock[0] += 3600
        later = ChannelOutbox(OutboxStore(db), clock=lambda: clock[0])
        sender = Recorder(DeliveryResult(True, "sent", ("9",)))
        await later.catch_up(sender)
        ((chat, text),) = sender.sent
        assert chat == "1" and text.startswith("Good morning!") and LATE_NOTE in text
        await ChannelOutbox(OutboxStore(db)).catch_up(sender)
        assert len(sender.sent) == 1
    finally:
        await db.close()
