"""The durable duplicate check: once per message, across a reopened store, forgotten by age."""

from __future__ import annotations

from pathlib import Path

from countbot.channels.kit.dedup import KEEP_FOR, PRUNE_EVERY, ReceivedIds
from countbot.store.channel_state import ChannelStateStore
from countbot.store.database import Database


async def test_a_message_counts_once_across_a_reopened_store_until_it_is_old(
    tmp_path: Path,
) -> None:
    path, clock = tmp_path / "countbot.db", [1_000_000.0]
    db = await Database.open(path)
    seen = ReceivedIds(ChannelStateStore(db), "slack", clock=lambda: clock[0])
    assert await seen.first_time("D1", "1700000000.000100")
    assert not await seen.first_time("D1", "1700000000.000100")
    assert await seen.first_time("D2", "1700000000.000100"), "ids are unique per chat"
    await db.close()

    db = await Database.open(path)
    try:
        again = ReceivedIds(ChannelStateStore(db), "slack", clock=lambda: clock[0])
        other = ReceivedIds(ChannelStateStore(db), "discord", clock=lambda: clock[0])
        assert not await again.first_time("D1", "1700000000.000100")
        assert await other.first_time("D1", "1700000000.000100"), "channels do not share ids"
        clock[0] += KEEP_FOR + PRUNE_EVERY + 1
        assert await again.first_time("D3", "new")  # this check forgets the week-old ids
        assert await again.first_time("D1", "1700000000.000100")
    finally:
        await db.close()
