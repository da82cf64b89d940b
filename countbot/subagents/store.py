"""Subagent records: what each was asked, for which session, and how it ended.

A record is written when the subagent is spawned and updated as it starts and ends, so a daemon
that stops mid-run finds it on the next start and tells the parent session (never a silent loss).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Literal

from countbot.store.database import Database

SubagentStatus = Literal[
    "queued", "running", "done", "error", "timeout", "cancelled", "interrupted"
]
ACTIVE: tuple[SubagentStatus, ...] = ("queued", "running")
# A subagent's own session is `subagent:<id>`; its turns and reports come from this channel.
SESSION_PREFIX = "subagent:"
CHANNEL = "subagent"

_COLUMNS = (
    "id, parent_session, session_id, label, task, tools, depth, channel, chat_id, status,"
    " result, created_at, started_at, ended_at, reported"
)


@dataclass(frozen=True, slots=True)
class SubagentRecord:
    id: str
    parent_session: str
    session_id: str
    label: str
    task: str
    # None: every tool a subagent may have.
    tools: tuple[str, ...] | None
    depth: int
    channel: str | None
    chat_id: str | None
    status: SubagentStatus
    result: str = ""
    created_at: float = 0.0
    started_at: float | None = None
    ended_at: float | None = None
    reported: bool = False

    @property
    def active(self) -> bool:
        return self.status in ACTIVE


class SubagentStore:
    """The `subagents` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, record: SubagentRecord) -> None:
        await self._db.run(_insert, record)

    async def get(self, subagent_id: str) -> SubagentRecord | None:
        rows = await self._db.run(_select, "WHERE id = ?", (subagent_id,))
        return rows[0] if rows else None

    async def list(
        self, *, parent_session: str | None = None, active_only: bool = False, limit: int = 50
    ) -> list[SubagentRecord]:
        """Newest first; optionally only one parent's, or only queued and running ones."""
        where, params = [], []
        if parent_session is not None:
            where.append("parent_session = ?")
            params.append(parent_session)
        if active_only:
            where.append(f"status IN ({', '.join('?' for _ in ACTIVE)})")
            params.extend(ACTIVE)
        clause = f"WHERE {' AND '.join(where)} " if where else ""
        params.append(max(limit, 0))
        return await self._db.run(
            _select, f"{clause}ORDER BY created_at DESC, rowid DESC LIMIT ?", tuple(params)
        )

    async def parents(self, session_ids: list[str]) -> dict[str, str]:
        """The parent session of each subagent session among `session_ids`."""
        if not session_ids:
            return {}
        return await self._db.run(_parents, session_ids)

    async def depth_of(self, session_id: str) -> int:
        """How deep the subagent whose session this is runs (0: not a subagent's)."""
        if not session_id.startswith(SESSION_PREFIX):
            return 0
        record = await self.get(session_id.removeprefix(SESSION_PREFIX))
        return record.depth if record is not None else 0

    async def root_of(self, session_id: str) -> str:
        """The conversation a chain of subagents started in (whose budgets they all spend)."""
        while session_id.startswith(SESSION_PREFIX):
            record = await self.get(session_id.removeprefix(SESSION_PREFIX))
            if record is None:
                break
            session_id = record.parent_session
        return session_id

    async def started(self, subagent_id: str) -> None:
        await self._db.run(_update, subagent_id, {"status": "running", "started_at": time.time()})

    async def ended(self, subagent_id: str, status: SubagentStatus, result: str) -> None:
        changes = {"status": status, "result": result, "ended_at": time.time()}
        await self._db.run(_update, subagent_id, changes)

    async def mark_reported(self, subagent_id: str) -> None:
        await self._db.run(_update, subagent_id, {"reported": 1})

    async def interrupt_active(self, reason: str) -> None:
        """Mark subagents a stopped daemon left queued or running as interrupted."""
        await self._db.run(_interrupt, reason, time.time())

    async def unreported(self) -> list[SubagentRecord]:
        """Ended subagents whose report never reached their parent session, oldest first."""
        marks = ", ".join("?" for _ in ACTIVE)
        return await self._db.run(
            _select, f"WHERE reported = 0 AND status NOT IN ({marks}) ORDER BY created_at", ACTIVE
        )


# --- SQL, run on the database thread ----------------------------------------------------------


def _insert(conn: sqlite3.Connection, r: SubagentRecord) -> None:
    tools = json.dumps(list(r.tools)) if r.tools is not None else None
    conn.execute(
        f"INSERT INTO subagents ({_COLUMNS}) VALUES ({', '.join('?' * 15)})",
        (
            r.id,
            r.parent_session,
            r.session_id,
            r.label,
            r.task,
            tools,
            r.depth,
            r.channel,
            r.chat_id,
            r.status,
            r.result,
            r.created_at or time.time(),
            r.started_at,
            r.ended_at,
            int(r.reported),
        ),
    )


def _select(
    conn: sqlite3.Connection, clause: str, params: tuple[object, ...]
) -> list[SubagentRecord]:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM subagents {clause}", params).fetchall()
    return [_record(row) for row in rows]


def _record(row: tuple[object, ...]) -> SubagentRecord:
    values = list(row)
    values[5] = tuple(json.loads(str(values[5]))) if values[5] is not None else None
    values[14] = bool(values[14])
    return SubagentRecord(*values)  # type: ignore[arg-type]


def _parents(conn: sqlite3.Connection, session_ids: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    # SQLite allows 999 parameters in older builds; the sessions page asks for at most 200.
    for start in range(0, len(session_ids), 500):
        chunk = session_ids[start : start + 500]
        rows = conn.execute(
            "SELECT session_id, parent_session FROM subagents"
            f" WHERE session_id IN ({', '.join('?' for _ in chunk)})",
            chunk,
        )
        found.update(dict(rows.fetchall()))
    return found


def _update(conn: sqlite3.Connection, subagent_id: str, changes: dict[str, object]) -> None:
    assignments = ", ".join(f"{column} = ?" for column in changes)
    conn.execute(
        f"UPDATE subagents SET {assignments} WHERE id = ?", [*changes.values(), subagent_id]
    )


def _interrupt(conn: sqlite3.Connection, reason: str, now: float) -> None:
    conn.execute(
        "UPDATE subagents SET status = 'interrupted', result = ?, ended_at = ?"
        f" WHERE status IN ({', '.join('?' for _ in ACTIVE)})",
        (reason, now, *ACTIVE),
    )
