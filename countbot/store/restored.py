"""A store restored from a backup owes nothing: what the original instance was about to send
may have gone out after the backup was made, and a restored copy must never send it twice."""

from __future__ import annotations

import sqlite3

from countbot.store.database import Database

RESTORED = "restored from a backup: not sent again"


async def settle_restored(db: Database, now: float) -> dict[str, int]:
    """Settle the outbox, mark subagents' reports as given and move every job's schedule to
    `now` (missed runs are not caught up); how many rows of each were touched."""
    return await db.run(_settle, now)


def _settle(conn: sqlite3.Connection, now: float) -> dict[str, int]:
    outbox = conn.execute(
        "UPDATE channel_outbox SET settled_at = ?, detail = ? WHERE settled_at IS NULL",
        (now, RESTORED),
    ).rowcount
    reports = conn.execute("UPDATE subagents SET reported = 1 WHERE reported = 0").rowcount
    jobs = conn.execute(
        "UPDATE cron_jobs SET checked_through = ? WHERE checked_through < ?", (now, now)
    ).rowcount
    return {"outbox": outbox, "reports": reports, "jobs": jobs}
