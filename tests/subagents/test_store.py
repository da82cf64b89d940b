"""Subagent records in SQLite: what a restart finds, and which reports are still owed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from countbot.store.database import Database
from countbot.subagents.store import SubagentRecord, SubagentStore


def record(subagent_id: str, parent: str = "s1", **changes: Any) -> SubagentRecord:
    values: dict[str, Any] = {
        "id": subagent_id,
        "parent_session": parent,
        "session_id": f"subagent:{subagent_id}",
        "label": subagent_id,
        "task": f"task {subagent_id}",
        "tools": None,
        "depth": 1,
        "channel": "telegram",
        "chat_id": "42",
        "status": "queued",
        **changes,
    }
    return SubagentRecord(**values)


async def test_a_record_round_trips_with_its_tools_and_state(db: Database) -> None:
    store = SubagentStore(db)
    await store.add(record("a1", tools=("read_file", "exec")))
    await store.started("a1")
    await store.ended("a1", "done", "all good")
    found = await store.get("a1")
    assert found is not None and found.tools == ("read_file", "exec")
    assert found.status == "done" and found.result == "all good" and not found.reported
    assert found.started_at is not None and found.ended_at is not None
    assert await store.get("nope") is None


async def test_listing_by_parent_and_state_newest_first(db: Database) -> None:
    store = SubagentStore(db)
    await store.add(record("a1", created_at=1.0))
    await store.add(record("a2", created_at=2.0, status="running"))
    await store.add(record("b1", parent="s2", created_at=3.0, status="done"))
    assert [r.id for r in await store.list()] == ["b1", "a2", "a1"]
    assert [r.id for r in await store.list(parent_session="s1")] == ["a2", "a1"]
    assert [r.id for r in await store.list(active_only=True)] == ["a2", "a1"]
    parents = await store.parents(["subagent:a1", "subagent:b1", "s1"])
    assert parents == {"subagent:a1": "s1", "subagent:b1": "s2"}


async def test_a_restart_interrupts_what_ran_and_owes_every_unreported_end(
    tmp_path: Path,
) -> None:
    path = tmp_path / "countbot.db"
    db = await Database.open(path)
    store = SubagentStore(db)
    await store.add(record("run", status="running", created_at=1.0))
    await store.add(record("wait", created_at=2.0))
    await store.add(record("told", status="done", reported=True, created_at=3.0))
    await store.add(record("owed", status="error", created_at=4.0))
    await db.close()  # the daemon died here

    db = await Database.open(path)
    store = SubagentStore(db)
    await store.interrupt_active("the daemon stopped")
    owed = await store.unreported()
    assert [(r.id, r.status) for r in owed] == [
        ("run", "interrupted"),
        ("wait", "interrupted"),
        ("owed", "error"),
    ]
    assert owed[0].result == "the daemon stopped"
    await store.mark_reported("run")
    assert [r.id for r in await store.unreported()] == ["wait", "owed"]
    await db.close()
