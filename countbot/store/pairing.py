"""Pairing: the short codes strangers get from a channel, and the senders their owner approved.

A sender has at most one code; it lives `ttl` seconds, and while it lives no second one is
issued, so a stranger is told a code at most once per `ttl`. Approving a live code moves its
sender to `paired_senders`, which the channels read as part of their allow-list (the running
daemon sees an approval made by the CLI at once: both use the same SQLite file).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from countbot.store.database import Database, exists

CODE_TTL = 3600.0


@dataclass(frozen=True, slots=True)
class SenderInfo:
    """Who a platform sender is: their stable id and, for people, their handle and name."""

    sender_id: str
    username: str | None = None
    display_name: str = ""

    def describe(self) -> str:
        handle = f" (@{self.username})" if self.username else ""
        name = f" {self.display_name}" if self.display_name else ""
        return f"{self.sender_id}{handle}{name}"


@dataclass(frozen=True, slots=True)
class PairingRequest:
    channel: str
    sender: SenderInfo
    code: str
    created_at: float


@dataclass(frozen=True, slots=True)
class PairedSender:
    channel: str
    sender: SenderInfo
    approved_at: float


class PairingStore:
    """Pairing codes and paired senders, per channel."""

    def __init__(self, db: Database, *, ttl: float = CODE_TTL) -> None:
        self._db = db
        self._ttl = ttl

    async def is_paired(self, channel: str, sender_id: str) -> bool:
        return await self._db.run(_is_paired, channel, sender_id)

    async def offer(
        self, channel: str, sender: SenderInfo, draw: Callable[[], str], now: float
    ) -> str | None:
        """A new code (from `draw`) for `sender`, or None when they hold a live one already."""
        return await self._db.run(_offer, channel, sender, draw, now, now - self._ttl)

    async def approve(self, channel: str, code: str, now: float) -> PairedSender | None:
        """Pair the sender holding the live `code` (any case); None for an unknown or old code."""
        return await self._db.run(_approve, channel, code.strip().upper(), now, now - self._ttl)

    async def pending(self, now: float) -> list[PairingRequest]:
        """Live codes, oldest first."""
        return await self._db.run(_pending, now - self._ttl)

    async def paired(self) -> list[PairedSender]:
        """Every paired sender, by channel then approval time."""
        return await self._db.run(_paired)


def _is_paired(conn: sqlite3.Connection, channel: str, sender_id: str) -> bool:
    return exists(
        conn,
        "SELECT 1 FROM paired_senders WHERE channel = ? AND sender_id = ?",
        (channel, sender_id),
    )


def _offer(
    conn: sqlite3.Connection,
    channel: str,
    sender: SenderInfo,
    draw: Callable[[], str],
    now: float,
    live_after: float,
) -> str | None:
    # Write first: the transaction takes the write lock before it reads (see database.py).
    conn.execute("DELETE FROM pairing_codes WHERE created_at <= ?", (live_after,))
    live = conn.execute(
        "SELECT 1 FROM pairing_codes WHERE channel = ? AND sender_id = ?",
        (channel, sender.sender_id),
    ).fetchone()
    if live is not None:
        return None
    while True:
        code = draw().upper()
        taken = conn.execute(
            "SELECT 1 FROM pairing_codes WHERE channel = ? AND code = ?", (channel, code)
        ).fetchone()
        if taken is None:
            break
    conn.execute(
        "INSERT INTO pairing_codes (channel, sender_id, username, display_name, code, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (channel, sender.sender_id, sender.username, sender.display_name, code, now),
    )
    return code


def _approve(
    conn: sqlite3.Connection, channel: str, code: str, now: float, live_after: float
) -> PairedSender | None:
    conn.execute("DELETE FROM pairing_codes WHERE created_at <= ?", (live_after,))
    row = conn.execute(
        "SELECT sender_id, username, display_name FROM pairing_codes"
        " WHERE channel = ? AND code = ?",
        (channel, code),
    ).fetchone()
    if row is None:
        return None
    conn.execute("DELETE FROM pairing_codes WHERE channel = ? AND code = ?", (channel, code))
    sender = SenderInfo(row[0], row[1], row[2])
    conn.execute(
        "INSERT INTO paired_senders (channel, sender_id, username, display_name, approved_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (channel, sender_id) DO UPDATE SET"
        " username = excluded.username, display_name = excluded.display_name,"
        " approved_at = excluded.approved_at",
        (channel, *row, now),
    )
    return PairedSender(channel, sender, now)


def _pending(conn: sqlite3.Connection, live_after: float) -> list[PairingRequest]:
    rows = conn.execute(
        "SELECT channel, sender_id, username, display_name, code, created_at FROM pairing_codes"
        " WHERE created_at > ? ORDER BY created_at",
        (live_after,),
    )
    return [PairingRequest(r[0], SenderInfo(r[1], r[2], r[3]), r[4], r[5]) for r in rows]


def _paired(conn: sqlite3.Connection) -> list[PairedSender]:
    rows = conn.execute(
        "SELECT channel, sender_id, username, display_name, approved_at FROM paired_senders"
        " ORDER BY channel, approved_at"
    )
    return [PairedSender(r[0], SenderInfo(r[1], r[2], r[3]), r[4]) for r in rows]
