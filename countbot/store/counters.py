"""Small counters per local day that must survive a restart (heartbeat beats, budget warnings)."""

from __future__ import annotations

import datetime as dt
import sqlite3

from countbot.store.database import Database


class DailyCounters:
    """Named counters that start again at zero each local day."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, name: str, day: dt.date | None = None) -> int:
        return await self._db.run(_get, name, _day(day))

    async def add(self, name: str, day: dt.date | None = None) -> int:
        """Count one more today (or on `day`) and return the new value."""
        return await self._db.run(_add, name, _day(day))


def _day(day: dt.date | None) -> str:
    return (day or dt.date.today()).isoformat()


def _get(conn: sqlite3.Connection, name: str, day: str) -> int:
    row = conn.execute(
        "SELECT value FROM daily_counters WHERE name = ? AND day = ?", (name, day)
    ).fetchone()
    return 0 if row is None else int(row[0])


def _add(conn: sqlite3.Connection, name: str, day: str) -> int:
    (value,) = conn.execute(
        "INSERT INTO daily_counters (name, day, value) VALUES (?, ?, 1)"
        " ON CONFLICT (name, day) DO UPDATE SET value = value + 1 RETURNING value",
        (name, day),
    ).fetchone()
    return int(value)
