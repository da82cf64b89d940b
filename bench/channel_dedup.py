"""What the durable duplicate check costs each inbound chat message: `ReceivedIds.first_time`
(one SQLite write on the store's worker thread, committed before the turn is submitted) against
a baseline measured in the same run: the in-memory check it replaced (`RecentIds`) and a bare
round trip to the store's thread (`SELECT 1`). Both a new id and a repeat are timed, on an empty
table and on one already holding a week of traffic.

    python bench/channel_dedup.py [--messages 2000] [--history 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from countbot.channels.kit.dedup import ReceivedIds
from countbot.channels.kit.recent import RecentIds
from countbot.store.channel_state import ChannelStateStore
from countbot.store.database import Database


async def timed(check: Callable[[int], Awaitable[object]], count: int) -> list[float]:
    times = []
    for n in range(count):
        start = time.perf_counter()
        await check(n)
        times.append(time.perf_counter() - start)
    return times


def fill(conn: sqlite3.Connection, history: int) -> None:
    now = time.time()
    conn.executemany(
        "INSERT INTO channel_seen (channel, key, seen_at) VALUES ('telegram', ?, ?)",
        ((f"old-chat\nold-{n}", now - n) for n in range(history)),
    )


async def measure(db: Database, count: int, label: str) -> list[tuple[str, list[float]]]:
    durable = ReceivedIds(ChannelStateStore(db), "telegram")
    memory = RecentIds()

    async def in_memory(n: int) -> object:
        return memory.first_time(("chat", str(n)))

    async def round_trip(n: int) -> object:
        return await db.run(lambda conn: conn.execute("SELECT 1").fetchone())

    async def new_id(n: int) -> object:
        return await durable.first_time("chat", f"{label}-{n}")

    async def repeat(n: int) -> object:
        return await durable.first_time("chat", f"{label}-{n}")

    return [
        (f"in memory (RecentIds, the old check) [{label}]", await timed(in_memory, count)),
        (f"store round trip (SELECT 1) [{label}]", await timed(round_trip, count)),
        (f"durable, a new id [{label}]", await timed(new_id, count)),
        (f"durable, a repeat [{label}]", await timed(repeat, count)),
    ]


async def main(count: int, history: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        db = await Database.open(Path(folder) / "countbot.db")
        try:
            rows = await measure(db, count, "empty table")
            await db.run(fill, history)
            rows += await measure(db, count, f"{history:,} stored")
        finally:
            await db.close()
    baseline = statistics.median(rows[1][1])
    print(f"Duplicate check per inbound message ({count} messages, WAL, synchronous=NORMAL)")
    print(f"{'check':<52} {'median ms':>10} {'p95 ms':>8} {'x round trip':>13}")
    for name, times in rows:
        median, p95 = statistics.median(times), sorted(times)[int(len(times) * 0.95)]
        print(f"{name:<52} {median * 1e3:>10.3f} {p95 * 1e3:>8.3f} {median / baseline:>13.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--history", type=int, default=100_000)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.messages, arguments.history))
