"""What memory must forget, written in the transaction of the change that forgets it.

The memory index is a SQLite file of its own, so a rewind, a deleted session or `memory_forget`
cannot remove its entries in the store's transaction (WAL makes a transaction over two attached
files atomic per file only). Instead the store's change and a row of this log commit together,
and the index applies every row after its own cursor (in its transaction that moves the cursor)
before any search reads it, and again at start: a kill between the two steps leaves the row,
never the entries. Applying a row twice removes nothing more: a session's row names the message
ids it covered, and later messages of a session with the same id are not among them.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Forget:
    """One thing to forget: a session's messages `first`..`last` (and recalls into it from
    `since` on), or the conversation passages holding `text`."""

    id: int
    session_id: str | None
    first: int
    last: int
    since: float
    text: str | None


def record_session(
    conn: sqlite3.Connection, session_id: str, first: int, since: float = 0.0
) -> None:
    """In the caller's transaction, before its deletion: the session's messages from `first`
    on, through its newest one now, are gone (and what was recalled into it from `since`)."""
    # One statement, a write (it takes the write lock first); nothing for a session not there.
    conn.execute(
        "INSERT INTO memory_forgets (session_id, first_message, last_message, since, created_at)"
        " SELECT id, :first,"
        " (SELECT coalesce(max(id), 0) FROM messages WHERE session_id = :session),"
        " :since, :now FROM sessions WHERE id = :session",
        {"session": session_id, "first": first, "since": since, "now": time.time()},
    )


def record_text(conn: sqlite3.Connection, text: str) -> None:
    """Conversation passages holding `text` (case-insensitive) are forgotten, now and later."""
    conn.execute(
        "INSERT INTO memory_forgets (text, created_at) VALUES (?, ?)",
        (text.casefold(), time.time()),
    )


def forgets_after(conn: sqlite3.Connection, after: int, limit: int) -> list[Forget]:
    rows = conn.execute(
        "SELECT id, session_id, first_message, last_message, since, text FROM memory_forgets"
        " WHERE id > ? ORDER BY id LIMIT ?",
        (after, limit),
    )
    return [Forget(*row) for row in rows]
