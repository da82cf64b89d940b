from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from countbot.store.database import Database, DatabaseClosedError
from countbot.store.schema import MIGRATIONS
from countbot.store.sessions import SessionStore


async def test_open_creates_the_folder_and_a_wal_database_at_the_newest_schema(
    tmp_path: Path,
) -> None:
    path = tmp_path / "nested" / "dir" / "countbot.db"
    db = await Database.open(path)
    try:
        mode = await db.run(lambda c: c.execute("PRAGMA journal_mode").fetchone()[0])
        version = await db.run(lambda c: c.execute("PRAGMA user_version").fetchone()[0])
        keys = await db.run(lambda c: c.execute("PRAGMA foreign_keys").fetchone()[0])
    finally:
        await db.close()
    assert path.is_file()
    assert (mode, version, keys) == ("wal", len(MIGRATIONS), 1)


async def test_data_survives_close_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "countbot.db"
    db = await Database.open(path)
    message_id = await SessionStore(db).append("s1", {"type": "user", "content": "remember me"})
    await db.close()

    db = await Database.open(path)
    try:
        records = await SessionStore(db).messages("s1")
    finally:
        await db.close()
    assert records == [{"type": "user", "content": "remember me", "id": message_id}]


async def test_a_failing_call_rolls_back_its_writes(db: Database) -> None:
    def insert_then_fail(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES ('half', 0, 0)")
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await db.run(insert_then_fail)
    assert await SessionStore(db).get("half") is None


async def test_close_is_idempotent_and_later_calls_fail_clearly(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "countbot.db")
    await db.close()
    await db.close()
    with pytest.raises(DatabaseClosedError):
        await SessionStore(db).get("anything")


async def test_a_file_from_a_newer_version_is_refused_not_damaged(tmp_path: Path) -> None:
    path = tmp_path / "countbot.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.close()

    with pytest.raises(RuntimeError, match="newer"):
        await Database.open(path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) + 1
    conn.close()


async def test_calls_made_together_run_in_order_each_in_its_own_transaction(
    tmp_path: Path,
) -> None:
    """Calls from one pass of the loop share a hand-off to the thread, not a transaction: each
    gets its own result, a failing one rolls back only itself, and the order is kept."""
    db = await Database.open(tmp_path / "countbot.db")
    try:
        await db.run(lambda c: c.execute("CREATE TABLE t (n INTEGER)"))

        def insert(conn: sqlite3.Connection, n: int) -> int:
            conn.execute("INSERT INTO t VALUES (?)", (n,))
            return n

        def insert_then_fail(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO t VALUES (99)")
            raise ValueError("refused")

        results = await asyncio.gather(
            db.run(insert, 1),
            db.run(insert_then_fail),
            db.run(insert, 2),
            return_exceptions=True,
        )
        rows = await db.run(lambda c: c.execute("SELECT n FROM t ORDER BY rowid").fetchall())
    finally:
        await db.close()
    assert results[0] == 1 and results[2] == 2
    assert isinstance(results[1], ValueError)
    assert rows == [(1,), (2,)]


async def test_a_write_run_now_goes_before_the_calls_waiting_and_is_kept(tmp_path: Path) -> None:
    """A webhook's row is written ahead of the turns' writes already waiting for the thread,
    committed on its own (it is there after a reopen)."""
    path = tmp_path / "countbot.db"
    db = await Database.open(path)
    gate = threading.Event()
    try:
        await db.run(lambda c: c.execute("CREATE TABLE t (n INTEGER)"))
        busy = db.run_blocking(gate.wait, 10)  # the thread is busy with something
        waiting = db.run(lambda c: c.execute("INSERT INTO t VALUES (1)"))
        await asyncio.sleep(0)  # both handed to the thread: the insert waits behind the gate
        first = db.run_now(lambda c: c.execute("INSERT INTO t VALUES (2)").rowcount)
        gate.set()
        assert await first == 1
        await asyncio.gather(busy, waiting)
    finally:
        await db.close()
    db = await Database.open(path)
    try:
        rows = await db.run(lambda c: c.execute("SELECT n FROM t ORDER BY rowid").fetchall())
    finally:
        await db.close()
    assert rows == [(2,), (1,)]


async def test_a_call_whose_caller_stopped_waiting_before_it_ran_is_not_run(
    tmp_path: Path,
) -> None:
    db = await Database.open(tmp_path / "countbot.db")
    try:
        await db.run(lambda c: c.execute("CREATE TABLE t (n INTEGER)"))
        write = asyncio.ensure_future(db.run(lambda c: c.execute("INSERT INTO t VALUES (1)")))
        await asyncio.sleep(0)  # queued, not yet handed to the thread
        write.cancel()
        count = await db.run(lambda c: c.execute("SELECT count(*) FROM t").fetchone()[0])
    finally:
        await db.close()
    assert write.cancelled()
    assert count == 0


async def test_calls_made_just_before_close_still_run(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "countbot.db")
    await db.run(lambda c: c.execute("CREATE TABLE t (n INTEGER)"))
    write = asyncio.ensure_future(db.run(lambda c: c.execute("INSERT INTO t VALUES (1)")))
    await asyncio.sleep(0)
    await db.close()
    await write
    db = await Database.open(tmp_path / "countbot.db")
    try:
        count = await db.run(lambda c: c.execute("SELECT count(*) FROM t").fetchone()[0])
    finally:
        await db.close()
    assert count == 1


async def test_blocking_work_queued_beside_a_call_runs_on_the_same_thread(
    tmp_path: Path,
) -> None:
    """`run_blocking` is for a look at files that should share a call's hand-off."""
    db = await Database.open(tmp_path / "countbot.db")
    try:
        looked, found = await asyncio.gather(
            db.run_blocking(threading.get_ident),
            db.run(lambda c: (threading.get_ident(), c.in_transaction)),
        )
    finally:
        await db.close()
    assert found == (looked, True)
    assert looked != threading.get_ident()
