"""The triggers' ledger: every accepted event is a row, received → running → delivered / failed.

A row is written (and durable) before the source is acknowledged: a webhook's `202`, a folder's
new file version, a mail's UID. The same source key twice is one row, so a repeated delivery is
acknowledged and never run again. A restart finds what was received and not finished; an event
whose turn was cut off by the restart runs once more, a second cut-off fails it (a turn that
takes the daemon down must not do so forever). A turn's answer is written to its row before it
is handed to the delivery path: an event cut off after that is not run again (the channel's
outbox owes the answer from then on, and sends it once). Rows are kept 30 days.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any, Literal

from countbot.store.database import Database

EventStatus = Literal["received", "running", "delivered", "failed"]
SourceKind = Literal["hook", "folder", "mailbox"]
# Turns one event may start: its first, and one more after a restart cut it off.
MAX_ATTEMPTS = 2
KEEP_FOR = 30 * 86400.0

_COLUMNS = (
    "id, trigger, kind, key, payload, status, detail, answer, attempts, received_at,"
    " started_at, ended_at"
)


@dataclass(frozen=True, slots=True)
class TriggerEvent:
    id: int
    trigger: str
    kind: SourceKind
    key: str
    payload: dict[str, Any]
    status: EventStatus
    detail: str = ""
    answer: str = ""
    attempts: int = 0
    received_at: float = 0.0
    started_at: float | None = None
    ended_at: float | None = None

    def shown(self) -> dict[str, Any]:
        """The row for the web UI and the API (the payload is the caller's to show or not)."""
        return {
            "id": self.id,
            "trigger": self.trigger,
            "kind": self.kind,
            "key": self.key,
            "status": self.status,
            "detail": self.detail,
            "answer": self.answer,
            "attempts": self.attempts,
            "received_at": self.received_at,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
        }


@dataclass(frozen=True, slots=True)
class Recorded:
    """What `record` did: the event's id, and whether it is new (False: a repeat)."""

    id: int
    new: bool


class TriggerEvents:
    """The `trigger_events` and `trigger_files` tables."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def record(
        self, trigger: str, kind: SourceKind, key: str, payload: dict[str, Any], now: float
    ) -> Recorded:
        """Write the event down as received (durable once this returns), unless its key was
        recorded before: then the earlier row's id, not new. One statement, committed on its
        own: the source is answered as soon as it is written."""
        return await self._db.run_now(_record, trigger, kind, key, json.dumps(payload), now)

    async def claim(self, trigger: str, now: float) -> TriggerEvent | None:
        """The trigger's oldest received event, now marked running (None: nothing waits)."""
        return await self._db.run(_claim, trigger, now)

    async def finish(
        self, event_id: int, status: EventStatus, detail: str, answer: str, now: float
    ) -> None:
        await self._db.run(_finish, event_id, status, detail, answer, now)

    async def answered(self, event_id: int, answer: str) -> None:
        """The turn ended with `answer`, about to be delivered: a restart does not run it again."""
        await self._db.run(_answered, event_id, answer)

    async def release(self, event_id: int) -> None:
        """A claimed event goes back to received (the daemon stopped before its turn ended)."""
        await self._db.run(_release, event_id)

    async def resume(self, now: float) -> list[str]:
        """At start: events a stopped daemon left running go back to received (or fail after
        `MAX_ATTEMPTS`); old rows are forgotten. The triggers that have events waiting."""
        return await self._db.run(_resume, now)

    async def forget(self, now: float) -> None:
        """Drop ended events older than `KEEP_FOR` (the ledger stays bounded)."""
        await self._db.run(_forget, now)

    async def again(self, event_id: int, now: float) -> TriggerEvent | None:
        """A new event with the same payload ("run again"); None when there is no such event."""
        return await self._db.run(_again, event_id, now)

    async def get(self, event_id: int) -> TriggerEvent | None:
        rows = await self._db.run(_select, "WHERE id = ?", (event_id,))
        return rows[0] if rows else None

    async def recent(self, trigger: str | None = None, limit: int = 50) -> list[TriggerEvent]:
        """Newest first, all triggers' or one's."""
        where, params = ("WHERE trigger = ? ", (trigger,)) if trigger else ("", ())
        return await self._db.run(
            _select, f"{where}ORDER BY id DESC LIMIT ?", (*params, max(0, limit))
        )

    async def waiting_since(self, before: float) -> list[TriggerEvent]:
        """Events still received that were recorded before `before` (the alarm's rows)."""
        return await self._db.run(
            _select, "WHERE status = 'received' AND received_at < ? ORDER BY id", (before,)
        )

    async def versions(self, trigger: str) -> dict[str, str]:
        """A watched folder's files (relative paths) and the version of each last taken in."""
        return await self._db.run(_versions, trigger)

    async def set_version(self, trigger: str, path: str, version: str | None) -> None:
        """Remember a file's version as taken in (None: the file is gone)."""
        await self._db.run(_set_version, trigger, path, version)


def _record(
    conn: sqlite3.Connection, trigger: str, kind: str, key: str, payload: str, now: float
) -> Recorded:
    cursor = conn.execute(
        "INSERT OR IGNORE INTO trigger_events (trigger, kind, key, payload, status, received_at)"
        " VALUES (?, ?, ?, ?, 'received', ?)",
        (trigger, kind, key, payload, now),
    )
    if cursor.rowcount == 1:
        assert cursor.lastrowid is not None
        return Recorded(cursor.lastrowid, True)
    (existing,) = conn.execute(
        "SELECT id FROM trigger_events WHERE trigger = ? AND key = ?", (trigger, key)
    ).fetchone()
    return Recorded(int(existing), False)


def _claim(conn: sqlite3.Connection, trigger: str, now: float) -> TriggerEvent | None:
    row = conn.execute(
        "SELECT id FROM trigger_events WHERE status = 'received' AND trigger = ?"
        " ORDER BY id LIMIT 1",
        (trigger,),
    ).fetchone()
    if row is None:
        return None
    conn.execute(
        "UPDATE trigger_events SET status = 'running', attempts = attempts + 1, started_at = ?"
        " WHERE id = ?",
        (now, row[0]),
    )
    return _select(conn, "WHERE id = ?", (row[0],))[0]


def _finish(
    conn: sqlite3.Connection, event_id: int, status: str, detail: str, answer: str, now: float
) -> None:
    conn.execute(
        "UPDATE trigger_events SET status = ?, detail = ?, answer = ?, ended_at = ? WHERE id = ?",
        (status, detail, answer, now, event_id),
    )


def _answered(conn: sqlite3.Connection, event_id: int, answer: str) -> None:
    conn.execute("UPDATE trigger_events SET answer = ? WHERE id = ?", (answer, event_id))


def _release(conn: sqlite3.Connection, event_id: int) -> None:
    conn.execute(
        "UPDATE trigger_events SET status = 'received' WHERE id = ? AND status = 'running'",
        (event_id,),
    )


def _resume(conn: sqlite3.Connection, now: float) -> list[str]:
    conn.execute(
        "UPDATE trigger_events SET status = 'delivered', ended_at = ?,"
        " detail = 'answered before a restart; the channel outbox sends what it still owes'"
        " WHERE status = 'running' AND answer != ''",
        (now,),
    )
    conn.execute(
        "UPDATE trigger_events SET status = 'failed', ended_at = ?,"
        " detail = 'a restart cut its turn off twice; not run again (use run again)'"
        " WHERE status = 'running' AND attempts >= ?",
        (now, MAX_ATTEMPTS),
    )
    conn.execute("UPDATE trigger_events SET status = 'received' WHERE status = 'running'")
    _forget(conn, now)
    rows = conn.execute(
        "SELECT DISTINCT trigger FROM trigger_events WHERE status = 'received'"
    ).fetchall()
    return [str(row[0]) for row in rows]


def _forget(conn: sqlite3.Connection, now: float) -> None:
    conn.execute(
        "DELETE FROM trigger_events WHERE received_at < ? AND status IN ('delivered', 'failed')",
        (now - KEEP_FOR,),
    )


def _again(conn: sqlite3.Connection, event_id: int, now: float) -> TriggerEvent | None:
    found = _select(conn, "WHERE id = ?", (event_id,))
    if not found:
        return None
    event = found[0]
    recorded = _record(
        conn, event.trigger, event.kind, f"{event.key}#again@{now}", json.dumps(event.payload), now
    )
    return _select(conn, "WHERE id = ?", (recorded.id,))[0]


def _select(conn: sqlite3.Connection, clause: str, params: tuple[Any, ...]) -> list[TriggerEvent]:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM trigger_events {clause}", params).fetchall()
    return [
        TriggerEvent(
            row[0],
            row[1],
            row[2],
            row[3],
            json.loads(row[4]),
            row[5],
            row[6],
            row[7],
            row[8],
            row[9],
            row[10],
            row[11],
        )
        for row in rows
    ]


def _versions(conn: sqlite3.Connection, trigger: str) -> dict[str, str]:
    rows = conn.execute(
        "SELECT path, version FROM trigger_files WHERE trigger = ?", (trigger,)
    ).fetchall()
    return {str(path): str(version) for path, version in rows}


def _set_version(conn: sqlite3.Connection, trigger: str, path: str, version: str | None) -> None:
    if version is None:
        conn.execute("DELETE FROM trigger_files WHERE trigger = ? AND path = ?", (trigger, path))
        return
    conn.execute(
        "INSERT INTO trigger_files (trigger, path, version) VALUES (?, ?, ?)"
        " ON CONFLICT (trigger, path) DO UPDATE SET version = excluded.version",
        (trigger, path, version),
    )
