"""`countbot backup create|verify|restore` round trips, as a user runs them beside a daemon."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import os
import sqlite3
from pathlib import Path

import httpx
import pytest
import yaml

from countbot.backup.create import copy_database
from countbot.backup.reading import BackupError, verify_backup
from countbot.backup.restore import restore_backup
from countbot.backup.schedule import BackupSchedule
from countbot.config.loader import load_settings
from countbot.config.structs import replaced
from countbot.store.database import Database
from countbot.store.outbox import OutboxStore
from countbot.store.restored import RESTORED
from countbot.web.daemon import bind_listener, serve_daemon
from tests.cli.process import COUNTBOT, countbot
from tests.support.scripted_model import ScriptedModelServer
from tests.web.conftest import write_config

KEY = "sk-test-0123456789abcdef"  # the key write_config puts in config.yaml


def _config(folder: Path, model_server: ScriptedModelServer) -> Path:
    path = write_config(folder, model_server)
    data = yaml.safe_load(path.read_text())
    data["channels"] = {"telegram": {"token": "${secret:telegram}", "allow_from": ["1"]}}
    path.write_text(yaml.safe_dump(data))
    (folder / "secrets.yaml").write_text("telegram: '123456:telegram-secret-token'\n")
    return path


async def _sessions(base: str) -> list[str]:
    async with httpx.AsyncClient(base_url=base, trust_env=False, timeout=60) as client:
        response = await client.get("/api/sessions")
    return [session["id"] for session in response.json()["sessions"]]


async def test_a_backup_made_while_the_daemon_writes_restores_into_a_working_instance(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = _config(home, model_server)
    settings = load_settings(config)
    archive = tmp_path / "nightly.tar.gz"
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            runtime = running.context.runtime
            await runtime.sessions.append("web:kept", {"type": "user", "content": "keep me"})
            # Owed to a chat when the backup is made: the original may send it right after.
            await OutboxStore(runtime.db).record("telegram", "1", "owed", (), "boot-1", 1.0)
            (settings.workspace / "memory").mkdir(parents=True, exist_ok=True)
            (settings.workspace / "memory" / "2026-11-28.md").write_text("- bought a bike\n")
            writing = asyncio.create_task(_keep_writing(runtime.sessions))
            status, out, err = await countbot("backup", "create", str(archive), config=config)
            writing.cancel()
    assert status == 0, err
    assert "model.api_key" in out and "channels.telegram.token" in out

    # No secret is anywhere in the archive's bytes.
    raw = gzip.decompress(archive.read_bytes())
    assert KEY.encode() not in raw and b"telegram-secret-token" not in raw

    status, out, err = await _run("backup", "verify", str(archive))
    assert status == 0 and "OK" in out, err
    status, out, err = await _run(
        "backup", "restore", str(archive), "--to", str(tmp_path / "restored")
    )
    assert status == 0, err
    assert "1 unsent messages settled as restored" in out

    restored_config = tmp_path / "restored" / "config.yaml"
    restored = load_settings(restored_config)
    assert restored.data_dir == tmp_path / "restored" / "data"
    assert restored.model.api_key is None  # typed again after a restore
    assert (restored.workspace / "memory" / "2026-11-28.md").read_text() == "- bought a bike\n"
    with sqlite3.connect(restored.data_dir / "countbot.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        writes = conn.execute(
            "SELECT record FROM messages WHERE session_id = 'web:busy' ORDER BY id"
        ).fetchall()
        assert [f'"n{n}"' in row[0] for n, row in enumerate(writes)] == [True] * len(writes)
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(restored, listener) as running:
            assert "web:kept" in await _sessions(f"http://127.0.0.1:{running.port}")
            outbox = OutboxStore(running.context.runtime.db)
            assert await outbox.owed("telegram", "a later boot") == []
            detail = await running.context.runtime.db.run(
                lambda c: c.execute("SELECT detail FROM channel_outbox").fetchone()[0]
            )
            assert detail == RESTORED


async def _run(*args: str) -> tuple[int, str, str]:
    """`countbot ARGS` for the commands that take an archive, not a config."""
    process = await asyncio.create_subprocess_exec(
        *COUNTBOT, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def _keep_writing(sessions: object) -> None:
    n = 0
    while True:
        await sessions.append("web:busy", {"type": "user", "content": f"n{n}"})  # type: ignore[attr-defined]
        n += 1
        await asyncio.sleep(0)


async def test_secrets_travel_only_when_asked_for(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = _config(home, model_server)
    # A pulled local model is named in the manifest, its weights left out.
    models = home / "data" / "models"
    models.mkdir(parents=True)
    (models / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"GGUF weights " * 1000)
    archive = tmp_path / "with-keys.tar.gz"
    status, _, err = await countbot(
        "backup", "create", str(archive), "--with-secrets", config=config
    )
    assert status == 0, err
    assert b"GGUF weights" not in gzip.decompress(archive.read_bytes())
    status, out, err = await _run("backup", "restore", str(archive), "--to", str(tmp_path / "x"))
    assert status == 0, err
    assert "countbot models pull smollm2-135m" in out
    settings = load_settings(tmp_path / "x" / "config.yaml")
    assert settings.model.api_key is not None
    assert settings.model.api_key.get_secret_value() == KEY
    token = settings.channels.telegram.token
    assert token is not None and token.get_secret_value() == "123456:telegram-secret-token"


async def test_the_scheduled_backup_keeps_the_newest_archives(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    settings = load_settings(write_config(tmp_path, model_server))
    settings.backup = replaced(settings.backup, every_hours=1.0, keep=2)
    db = await Database.open(settings.data_dir / "countbot.db")
    await db.close()
    folder = settings.data_dir / "backups"
    folder.mkdir(parents=True)
    # Three archives from days ago: the next one is due at once, and the oldest two then go.
    for day in (1, 2, 3):
        old = folder / f"countbot-backup-2026010{day}-000000.tar.gz"
        old.write_bytes(b"old")
        os.utime(old, (86400 * day, 86400 * day))
    schedule = BackupSchedule(settings)
    schedule.start()
    try:
        for _ in range(600):  # an upper bound; the backup is made within a few hundred ms
            made = sorted(folder.glob("countbot-backup-2*.tar.gz"))
            if len(made) == 2 and made[0].name.endswith("20260103-000000.tar.gz"):
                break
            await asyncio.sleep(0.1)
    finally:
        await schedule.stop()
    names = [path.name for path in sorted(folder.iterdir())]
    assert len(names) == 2 and names[0] == "countbot-backup-20260103-000000.tar.gz", names
    verify_backup(folder / names[1])


def test_a_live_database_copy_holds_what_was_committed(tmp_path: Path) -> None:
    source = tmp_path / "live.db"
    with sqlite3.connect(source) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (x)")
        conn.executemany("INSERT INTO t VALUES (?)", [(n,) for n in range(1000)])
        conn.commit()
        conn.execute("INSERT INTO t VALUES ('not yet committed')")
        assert copy_database(source, tmp_path / "copy.db") == 0
    with sqlite3.connect(tmp_path / "copy.db") as copy:
        assert copy.execute("SELECT count(*) FROM t").fetchone()[0] == 1000
    assert not (tmp_path / "copy.db-wal").exists()


async def test_a_restore_never_writes_into_a_folder_in_use(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "config.yaml").write_text("model: {}\n")
    with pytest.raises(BackupError, match="not an empty folder"):
        await restore_backup(tmp_path / "any.tar.gz", taken)
    assert [path.name for path in taken.iterdir()] == ["config.yaml"]


async def test_an_archive_of_a_newer_store_is_refused_with_words(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = _config(home, model_server)
    database = load_settings(config).data_dir / "countbot.db"
    await (await Database.open(database)).close()
    with contextlib.closing(sqlite3.connect(database)) as conn:
        conn.execute("PRAGMA user_version = 999")
    archive = tmp_path / "newer.tar.gz"
    status, _, err = await countbot("backup", "create", str(archive), config=config)
    assert status == 0, err
    status, _, err = await _run("backup", "restore", str(archive), "--to", str(tmp_path / "r"))
    assert status == 1
    assert "written by a newer CountBot" in err and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == ["home", "newer.tar.gz"]
