"""What a chat channel must remember across restarts: each chat's current session, how far the
channel's update stream has been handled, and which events it received (by the id the platform
guarantees unique), so a restart never handles an update twice.
"""

from __future__ import annotations

import sqlite3

from countbot.store.database import Database


class ChannelStateStore:
    """Chat-to-session assignments and update cursors, per channel."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def session_for(self, channel: str, chat_id: str) -> str | None:
        """The session a chat talks in, or None when it still uses its default one."""
        return await self._db.run(_session_for, channel, chat_id)

    async def assign_session(self, channel: str, chat_id: str, session_id: str) -> None:
        await self._db.run(_assign, channel, chat_id, session_id)

    async def cursor(self, channel: str) -> int:
        """The highest update id handled so far (0 when none was)."""
        return await self._db.run(_cursor, channel)

    async def advance(self, channel: str, position: int) -> None:
        """Record `position` as handled; a cursor never moves back."""
        await self._db.run(_advance, channel, position)

    async def first_time(
        self, channel: str, key: str, now: float, forget_before: float | None = None
    ) -> bool:
        """Record `key` as received; True only the first time. Durable once this returns (it
        survives a killed process). `forget_before` also drops keys received before then."""
        return await self._db.run(_first_time, channel, key, now, forget_before)


def _session_for(conn: sqlite3.Connection, channel: str, chat_id: str) -> str | None:
    row = conn.execute(
        "SELECT session_id FROM channel_chats WHERE channel = ? AND chat_id = ?",
        (channel, chat_id),
    ).fetchone()
    return None if row is None else str(row[0])


def _assign(conn: sqlite3.Connection, channel: str, chat_id: str, session_id: str) -> None:
    conn.execute(
        "INSERT INTO channel_chats (channel, chat_id, session_id) VALUES (?, ?, ?)"
        " ON CONFLICT (channel, chat_id) DO UPDATE SET session_id = excluded.session_id",
        (channel, chat_id, session_id),
    )


def _cursor(conn: sqlite3.Connection, channel: str) -> int:
    row = conn.execute(
        "SELECT position FROM channel_cursors WHERE channel = ?", (channel,)
    ).fetchone()
    return 0 if row is None else int(row[0])


def _advance(conn: sqlite3.Connection, channel: str, position: int) -> None:
    conn.execute(
        "INSERT INTO channel_cursors (channel, position) VALUES (?, ?)"
        " ON CONFLICT (channel) DO UPDATE SET position = MAX(position, excluded.position)",
        (channel, position),
    )


def _first_time(
    conn: sqlite3.Connection, channel: str, key: str, now: float, forget_before: float | None
) -> bool:
    added = conn.execute(
        "INSERT OR IGNORE INTO channel_seen (channel, key, seen_at) VALUES (?, ?, ?)",
        (channel, key, now),
    ).rowcount
    if forget_before is not None:
        conn.execute("DELETE FROM channel_seen WHERE seen_at < ?", (forget_before,))
    return added == 1
