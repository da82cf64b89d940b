"""The ledger in SQLite: one row per source key, resumed once after a restart, kept 30 days."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from countbot.store.database import Database
from countbot.triggers.events import KEEP_FOR, TriggerEvents

NOW = 1_800_000_000.0


@pytest.fixture
async def events(tmp_path: Path) -> AsyncIterator[TriggerEvents]:
    db = await Database.open(tmp_path / "countbot.db")
    try:
        yield TriggerEvents(db)
    finally:
        await db.close()


async def test_a_key_recorded_twice_is_one_event(events: TriggerEvents) -> None:
    first = await events.record("gh", "hook", "delivery-1", {"body": 1}, NOW)
    again = await events.record("gh", "hook", "delivery-1", {"body": 2}, NOW + 1)
    other = await events.record("forms", "hook", "delivery-1", {"body": 3}, NOW + 2)
    assert (first.new, again.new, other.new) == (True, False, True)
    assert again.id == first.id and other.id != first.id
    stored = await events.get(first.id)
    assert stored is not None and stored.payload == {"body": 1}


async def test_a_cut_off_turn_is_resumed_once_then_failed(events: TriggerEvents) -> None:
    recorded = await events.record("gh", "hook", "d", {}, NOW)
    claimed = await events.claim("gh", NOW)
    assert claimed is not None and (claimed.status, claimed.attempts) == ("running", 1)
    assert await events.claim("gh", NOW) is None  # running: nobody else takes it
    assert await events.resume(NOW + 10) == ["gh"]  # a restart: received again
    second = await events.claim("gh", NOW + 10)
    assert second is not None and second.attempts == 2
    assert await events.resume(NOW + 20) == []  # cut off twice: failed, not run forever
    ended = await events.get(recorded.id)
    assert ended is not None and ended.status == "failed" and "twice" in ended.detail


async def test_an_event_answered_before_a_restart_is_not_run_again(
    events: TriggerEvents,
) -> None:
    recorded = await events.record("gh", "hook", "d", {}, NOW)
    await events.claim("gh", NOW)
    await events.answered(recorded.id, "The summary.")  # then the daemon died while sending
    assert await events.resume(NOW + 10) == []
    ended = await events.get(recorded.id)
    assert ended is not None and (ended.status, ended.answer) == ("delivered", "The summary.")
    assert "outbox" in ended.detail


async def test_ended_events_are_kept_thirty_days(events: TriggerEvents) -> None:
    old = await events.record("gh", "hook", "old", {}, NOW)
    await events.finish(old.id, "delivered", "sent", "answer", NOW)
    waiting = await events.record("gh", "hook", "waiting", {}, NOW)
    await events.forget(NOW + KEEP_FOR + 1)
    assert await events.get(old.id) is None
    assert await events.get(waiting.id) is not None  # not ended: never dropped unseen
    again = await events.again(waiting.id, NOW + 5)
    assert again is not None and again.id != waiting.id and again.status == "received"
