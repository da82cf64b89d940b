"""Scheduled jobs and their run history, in readable columns (no pickled scheduler state).

Rows are plain dicts keyed by column name; the scheduler turns them into its own dataclasses, so
this module knows tables, not scheduling.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from countbot.store.database import Database, exists

JOB_COLUMNS = (
    "id",
    "name",
    "schedule_kind",
    "schedule_value",
    "timezone",
    "schedule_since",
    "prompt",
    "session_id",
    "deliver_channel",
    "deliver_chat_id",
    "enabled",
    "created_from",
    "created_at",
    "updated_at",
    "checked_through",
    "consecutive_failures",
    "agent",
)
RUN_COLUMNS = (
    "job_id",
    "trigger",
    "scheduled_for",
    "started_at",
    "ended_at",
    "status",
    "error",
    "output",
    "delivered",
    "delivery_detail",
    "notes",
)
# The newest run of each job, for listings.
_LAST_RUN = (
    "(SELECT r.{column} FROM cron_runs AS r WHERE r.job_id = j.id ORDER BY r.id DESC LIMIT 1)"
)


class JobStore:
    """Job definitions and run history; every write is one transaction."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def insert(self, row: dict[str, Any]) -> None:
        """Add a job; ValueError if its id is taken."""
        try:
            await self._db.run(_insert, "cron_jobs", JOB_COLUMNS, row)
        except sqlite3.IntegrityError as exc:
            raise ValueError(f"job {row['id']!r} already exists") from exc

    async def update(self, job_id: str, changes: dict[str, Any]) -> bool:
        """Set some columns of a job; False if there is no such job."""
        unknown = set(changes) - set(JOB_COLUMNS[1:])
        if unknown:
            raise ValueError(f"not job columns: {sorted(unknown)}")
        return await self._db.run(_update_job, job_id, changes)

    async def delete(self, job_id: str) -> bool:
        """Remove a job and its history; False if there was none."""
        return await self._db.run(_delete_job, job_id)

    async def get(self, job_id: str) -> dict[str, Any] | None:
        rows = await self._db.run(_jobs, "WHERE j.id = ?", (job_id,))
        return rows[0] if rows else None

    async def list(self) -> list[dict[str, Any]]:
        """Every job, oldest first, with its newest run's `last_status` and `last_run_at`."""
        return await self._db.run(_jobs, "", ())

    async def start_run(self, row: dict[str, Any]) -> int:
        """Record a run as it starts (or a finished record, such as missed runs); its id."""
        return await self._db.run(_insert, "cron_runs", RUN_COLUMNS, row)

    async def finish_run(self, run_id: int, changes: dict[str, Any]) -> None:
        unknown = set(changes) - set(RUN_COLUMNS)
        if unknown:
            raise ValueError(f"not run columns: {sorted(unknown)}")
        await self._db.run(_update_run, run_id, changes)

    async def runs(self, job_id: str, limit: int = 20) -> list[dict[str, Any]]:
        """A job's newest runs, newest first."""
        return await self._db.run(_runs, job_id, max(limit, 0))

    async def interrupt_running(self, ended_at: float, reason: str) -> int:
        """Close runs left "running" by a process that died; how many there were."""
        return await self._db.run(_interrupt_running, ended_at, reason)

    async def data_version(self) -> int:
        """Changes when another process (the CLI) has written to the database since last read."""
        return await self._db.run(_data_version)


def _insert(
    conn: sqlite3.Connection, table: str, columns: tuple[str, ...], row: dict[str, Any]
) -> int:
    # Only the columns given, so the table's defaults fill the rest.
    given = [c for c in columns if c in row]
    names = ", ".join(given)
    marks = ", ".join("?" for _ in given)
    cursor = conn.execute(
        f"INSERT INTO {table} ({names}) VALUES ({marks})", [row[c] for c in given]
    )
    return int(cursor.lastrowid or 0)


def _update_job(conn: sqlite3.Connection, job_id: str, changes: dict[str, Any]) -> bool:
    if not changes:
        return exists(conn, "SELECT 1 FROM cron_jobs WHERE id = ?", (job_id,))
    assignments = ", ".join(f"{column} = ?" for column in changes)
    cursor = conn.execute(
        f"UPDATE cron_jobs SET {assignments} WHERE id = ?", [*changes.values(), job_id]
    )
    return cursor.rowcount > 0


def _update_run(conn: sqlite3.Connection, run_id: int, changes: dict[str, Any]) -> None:
    assignments = ", ".join(f"{column} = ?" for column in changes)
    conn.execute(f"UPDATE cron_runs SET {assignments} WHERE id = ?", [*changes.values(), run_id])


def _delete_job(conn: sqlite3.Connection, job_id: str) -> bool:
    return conn.execute("DELETE FROM cron_jobs WHERE id = ?", (job_id,)).rowcount > 0


def _jobs(conn: sqlite3.Connection, where: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
    columns = ", ".join(f"j.{c}" for c in JOB_COLUMNS)
    last_status = _LAST_RUN.format(column="status")
    last_run_at = _LAST_RUN.format(column="started_at")
    sql = (
        f"SELECT {columns}, {last_status} AS last_status, {last_run_at} AS last_run_at"
        f" FROM cron_jobs AS j {where} ORDER BY j.created_at, j.id"
    )
    return _rows(conn.execute(sql, params))


def _runs(conn: sqlite3.Connection, job_id: str, limit: int) -> list[dict[str, Any]]:
    cursor = conn.execute(
        f"SELECT id, {', '.join(RUN_COLUMNS)} FROM cron_runs WHERE job_id = ?"
        " ORDER BY id DESC LIMIT ?",
        (job_id, limit),
    )
    return _rows(cursor)


def _interrupt_running(conn: sqlite3.Connection, ended_at: float, reason: str) -> int:
    cursor = conn.execute(
        "UPDATE cron_runs SET status = 'error', ended_at = ?, error = ? WHERE status = 'running'",
        (ended_at, reason),
    )
    return cursor.rowcount


def _data_version(conn: sqlite3.Connection) -> int:
    (version,) = conn.execute("PRAGMA data_version").fetchone()
    return int(version)


def _rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor]
