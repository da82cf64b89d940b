"""Instances written by earlier commits (tests/store/upgrades/, made by make_fixtures.sh running
those commits) open in today's daemon with every session, message, job, note and pairing."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import shutil
import signal
import sqlite3
import sys
from pathlib import Path

import httpx
import pytest
import yaml

from countbot.config.loader import load_settings
from countbot.store.database import Database
from countbot.store.schema import MIGRATIONS
from countbot.web.daemon import bind_listener, serve_daemon
from tests.cli.process import countbot
from tests.support.scripted_model import ScriptedModelServer
from tests.web.conftest import write_config

FIXTURES = Path(__file__).with_name("upgrades")
INSTANCES = sorted(path.name for path in FIXTURES.glob("instance-*"))
SESSIONS = ("web:alpha", "telegram:42", "cli:default")
MIGRATING = Path(__file__).with_name("migrate_until_killed.py")


def _instance(tmp_path: Path, name: str, model_server: ScriptedModelServer) -> Path:
    shutil.copytree(FIXTURES / name, tmp_path, dirs_exist_ok=True)
    config = write_config(tmp_path, model_server)
    data = yaml.safe_load(config.read_text())
    config.write_text(yaml.safe_dump({**data, "workspace": "data/workspace"}))
    return config


def _version(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute("PRAGMA user_version").fetchone()[0]


def test_there_are_fixtures_from_the_first_store_and_a_week_ago() -> None:
    assert {"instance-0cfd2f6", "instance-5566af5"} <= set(INSTANCES)


@pytest.mark.parametrize("name", INSTANCES)
async def test_an_earlier_instance_opens_with_everything_in_place(
    tmp_path: Path, name: str, model_server: ScriptedModelServer
) -> None:
    config = _instance(tmp_path, name, model_server)
    database = tmp_path / "data" / "countbot.db"
    old_version = _version(database)
    with_channels = old_version >= 2  # pairing and jobs came with schema 2 and 3
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(load_settings(config), listener) as running:
            base = f"http://127.0.0.1:{running.port}"
            async with httpx.AsyncClient(base_url=base, trust_env=False, timeout=60) as client:
                listed = (await client.get("/api/sessions")).json()["sessions"]
                assert {session["id"] for session in listed} >= set(SESSIONS)
                for session in SESSIONS:
                    page = (await client.get(f"/api/sessions/{session}/messages")).json()
                    texts = [record["content"] for record in page["messages"]]
                    assert texts == [
                        f"{session} {kind} {turn}"
                        for turn in range(3)
                        for kind in ("question", "answer")
                    ]
                # One agent then, `main` now: every session is its, answered in its house.
                mains = await running.context.runtime.sessions.list(agent="main", limit=500)
                assert {info.id for info in mains} >= set(SESSIONS)
                memory = (await client.get("/api/memory")).json()["content"]
                assert "The owner's bike is blue." in memory and "Dentist on Fridays." in memory
                jobs = (await client.get("/api/cron/jobs")).json()["jobs"]
                paired = (await client.get("/api/channels/pairing")).json()["paired"]
                if with_channels:
                    assert [job["name"] for job in jobs] == ["morning news"]
                    assert [p["sender"]["sender_id"] for p in paired] == ["42"]
    assert _version(database) == len(MIGRATIONS)
    copy = database.with_name(f"countbot.db.v{old_version}.bak")
    assert _version(copy) == old_version  # the file as it was, kept before the migration


async def test_a_kill_during_a_migration_leaves_the_old_version_and_the_next_start_migrates(
    tmp_path: Path,
) -> None:
    source = FIXTURES / "instance-0cfd2f6" / "data" / "countbot.db"
    for attempt in range(50):  # until a kill lands inside the migration's transaction
        database = tmp_path / f"try{attempt}" / "countbot.db"
        database.parent.mkdir()
        shutil.copy(source, database)
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(MIGRATING), str(database), stdout=asyncio.subprocess.PIPE
        )
        assert process.stdout is not None
        assert await process.stdout.readline() == b"opening\n"
        await asyncio.sleep(0.05 * (attempt % 5))
        process.send_signal(signal.SIGKILL)
        await process.wait()
        if database.with_name("countbot.db.v1.bak").exists() and _version(database) == 1:
            break
    else:
        pytest.fail("no kill landed inside the migration")
    with contextlib.closing(sqlite3.connect(database)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 18
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        assert "slow_migration" not in tables
    db = await Database.open(database)
    try:
        count = await db.run(lambda c: c.execute("SELECT count(*) FROM messages").fetchone()[0])
    finally:
        await db.close()
    assert count == 18 and _version(database) == len(MIGRATIONS)


async def test_the_daemon_refuses_an_instance_from_a_newer_version_with_words(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = _instance(tmp_path, INSTANCES[-1], model_server)
    database = tmp_path / "data" / "countbot.db"
    with contextlib.closing(sqlite3.connect(database)) as conn:
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    status, _, err = await countbot("run", config=config)
    assert status == 2
    assert "written by a newer CountBot" in err and "Nothing was changed" in err
    assert "Traceback" not in err
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before


def _row_counts(path: Path) -> dict[str, int]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        tables = [
            row[0]
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not row[0].startswith("sqlite_")
        ]
        return {
            table: conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] for table in tables
        }


@pytest.mark.parametrize("name", INSTANCES)
async def test_no_migration_drops_a_table_or_a_row(tmp_path: Path, name: str) -> None:
    database = tmp_path / "countbot.db"
    shutil.copy(FIXTURES / name / "data" / "countbot.db", database)
    before = _row_counts(database)
    await (await Database.open(database)).close()
    after = _row_counts(database)
    assert {table: after.get(table) for table in before} == before
