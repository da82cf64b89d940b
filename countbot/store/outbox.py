"""What the chat channels owe: answers and deliveries recorded before they are sent, settled
once the platform accepted them, so a restart delivers what a crash or an outage cut off.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from countbot.store.database import Database


@dataclass(frozen=True, slots=True)
class OwedMessage:
    id: int
    channel: str
    chat_id: str
    text: str
    files: tuple[str, ...]
    created_at: float


class OutboxStore:
    """The `channel_outbox` table; `boot` names the daemon run that recorded a message."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def record(
        self, channel: str, chat_id: str, text: str, files: tuple[str, ...], boot: str, now: float
    ) -> int:
        """Write a message down as owed (durable once this returns); its id."""
        return await self._db.run(_record, channel, chat_id, text, files, boot, now)

    async def settle(self, message_id: int, now: float, detail: str = "") -> None:
        """Delivered (or given up, saying why in `detail`): never sent again."""
        await self._db.run(_settle, message_id, now, detail)

    async def owed(self, channel: str, boot: str) -> list[OwedMessage]:
        """What earlier daemon runs recorded for `channel` and never settled, oldest first."""
        return await self._db.run(_owed, channel, boot)

    async def forget(self, before: float) -> None:
        """Drop messages recorded before `before`, settled or not (the outbox stays bounded)."""
        await self._db.run(_forget, before)


def _record(
    conn: sqlite3.Connection,
    channel: str,
    chat_id: str,
    text: str,
    files: tuple[str, ...],
    boot: str,
    now: float,
) -> int:
    cursor = conn.execute(
        "INSERT INTO channel_outbox (channel, chat_id, text, files, boot, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (channel, chat_id, text, json.dumps(list(files)), boot, now),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def _settle(conn: sqlite3.Connection, message_id: int, now: float, detail: str) -> None:
    conn.execute(
        "UPDATE channel_outbox SET settled_at = ?, detail = ? WHERE id = ? AND settled_at IS NULL",
        (now, detail, message_id),
    )


def _owed(conn: sqlite3.Connection, channel: str, boot: str) -> list[OwedMessage]:
    rows = conn.execute(
        "SELECT id, channel, chat_id, text, files, created_at FROM channel_outbox"
        " WHERE channel = ? AND settled_at IS NULL AND boot != ? ORDER BY id",
        (channel, boot),
    ).fetchall()
    return [
        OwedMessage(row[0], row[1], row[2], row[3], tuple(json.loads(row[4])), row[5])
        for row in rows
    ]


def _forget(conn: sqlite3.Connection, before: float) -> None:
    conn.execute("DELETE FROM channel_outbox WHERE created_at < ?", (before,))
