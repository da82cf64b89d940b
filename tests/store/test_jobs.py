"""Job definitions and run history in SQLite: readable rows, updates, history, crash clean-up."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from countbot.store.database import Database
from countbot.store.jobs import JobStore


def job_row(job_id: str = "j1", **changes: Any) -> dict[str, Any]:
    row = {
        "id": job_id,
        "name": "Train",
        "schedule_kind": "cron",
        "schedule_value": "0 8 * * 1-5",
        "timezone": "Europe/Berlin",
        "schedule_since": 100.0,
        "prompt": "Check the train",
        "session_id": f"cron:{job_id}",
        "deliver_channel": "telegram",
        "deliver_chat_id": "42",
        "enabled": 1,
        "created_from": "cli",
        "created_at": 100.0,
        "updated_at": 100.0,
        "checked_through": 100.0,
        "consecutive_failures": 0,
    }
    return {**row, **changes}


def running(started_at: float, trigger: str = "schedule") -> dict[str, Any]:
    return {"job_id": "j1", "trigger": trigger, "started_at": started_at, "status": "running"}


@pytest.fixture
def jobs(db: Database) -> JobStore:
    return JobStore(db)


async def test_a_job_is_stored_in_plain_columns_anyone_can_read(
    jobs: JobStore, db: Database, tmp_path: Path
) -> None:
    await jobs.insert(job_row())
    await db.close()
    with sqlite3.connect(tmp_path / "data" / "countbot.db") as conn:
        row = conn.execute("SELECT name, schedule_value, deliver_chat_id FROM cron_jobs").fetchone()
    assert row == ("Train", "0 8 * * 1-5", "42")


async def test_insert_update_get_list_and_delete(jobs: JobStore) -> None:
    await jobs.insert(job_row("a"))
    await jobs.insert(job_row("b", created_at=50.0))
    with pytest.raises(ValueError, match="already exists"):
        await jobs.insert(job_row("a"))
    assert await jobs.update("a", {"name": "Bus", "enabled": 0})
    assert not await jobs.update("missing", {"name": "x"})
    with pytest.raises(ValueError, match="not job columns"):
        await jobs.update("a", {"id": "z"})
    got = await jobs.get("a")
    assert got is not None and (got["name"], got["enabled"]) == ("Bus", 0)
    assert [row["id"] for row in await jobs.list()] == ["b", "a"]
    assert await jobs.delete("a") and not await jobs.delete("a")
    assert await jobs.get("a") is None


async def test_run_history_newest_first_with_the_last_status_in_listings(jobs: JobStore) -> None:
    await jobs.insert(job_row())
    first = await jobs.start_run(
        {"job_id": "j1", "trigger": "schedule", "started_at": 1.0, "status": "running"}
    )
    await jobs.finish_run(
        first, {"ended_at": 2.0, "status": "ok", "output": "On time", "delivered": 1}
    )
    await jobs.start_run(
        {"job_id": "j1", "trigger": "manual", "started_at": 3.0, "status": "running"}
    )
    runs = await jobs.runs("j1")
    assert [(r["status"], r["output"], r["delivered"]) for r in runs] == [
        ("running", "", 0),
        ("ok", "On time", 1),
    ]
    (listed,) = await jobs.list()
    assert (listed["last_status"], listed["last_run_at"]) == ("running", 3.0)


async def test_runs_left_running_by_a_crash_are_closed(jobs: JobStore) -> None:
    await jobs.insert(job_row())
    await jobs.start_run(
        {"job_id": "j1", "trigger": "schedule", "started_at": 1.0, "status": "running"}
    )
    assert await jobs.interrupt_running(9.0, "stopped") == 1
    (run,) = await jobs.runs("j1")
    assert (run["status"], run["ended_at"], run["error"]) == ("error", 9.0, "stopped")


async def test_deleting_a_job_deletes_its_history(jobs: JobStore) -> None:
    await jobs.insert(job_row())
    await jobs.start_run({**running(1.0), "status": "ok"})
    await jobs.delete("j1")
    assert await jobs.runs("j1") == []


async def test_data_version_moves_when_another_connection_writes(
    jobs: JobStore, tmp_path: Path
) -> None:
    before = await jobs.data_version()
    await jobs.insert(job_row())
    assert await jobs.data_version() == before  # our own writes do not count
    other = await Database.open(tmp_path / "data" / "countbot.db")
    try:
        await JobStore(other).update("j1", {"name": "Bus"})
    finally:
        await other.close()
    assert await jobs.data_version() != before
