"""`kill -9` during writes, during WAL checkpoints and during migrations, 200 times over: the
file stays whole and every message a writer had acknowledged is there."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import signal
import sqlite3
import sys
from pathlib import Path

from countbot.store.database import Database
from countbot.store.schema import MIGRATIONS

ZYGOTE = Path(__file__).with_name("kill_target.py")
OLD_STORE = Path(__file__).with_name("upgrades") / "instance-0cfd2f6" / "data" / "countbot.db"
KILLS = 200
# The old store's own messages: every migrated copy must keep them.
OLD_MESSAGES = 18


class Zygote:
    """The forking writer process and its output lines."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def line(self) -> list[str]:
        assert self.process.stdout is not None
        raw = await asyncio.wait_for(self.process.stdout.readline(), 60)
        assert raw, "the zygote ended"
        return raw.decode().split()

    async def kill_after(self, mode: str, database: Path, acks: int) -> dict[int, int]:
        """Start a writer, kill it after `acks` acknowledgements (0: at once); what it acked."""
        assert self.process.stdin is not None
        self.process.stdin.write(f"{mode} {database}\n".encode())
        await self.process.stdin.drain()
        kind, pid = await self.line()
        assert kind == "child"
        acked: dict[int, int] = {}
        if acks == 0:
            await asyncio.sleep(random.random() * 0.05)  # inside the open, or just after
        while len(acked) < acks:
            words = await self.line()
            acked[int(words[1])] = int(words[2])
        os.kill(int(pid), signal.SIGKILL)
        while (words := await self.line()) != ["ended"]:
            acked[int(words[1])] = int(words[2])  # committed before the kill landed
        return acked


def _check(database: Path, acked: dict[int, int]) -> tuple[int, int]:
    """Integrity, and every acknowledged message in place; the schema version and how many
    messages other sessions hold."""
    with contextlib.closing(sqlite3.connect(database)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute(
            "SELECT id, json_extract(record, '$.content') FROM messages WHERE session_id = 'kill'"
        )
        stored = dict(rows.fetchall())
        for message_id, n in acked.items():
            assert stored.get(message_id) == f"m{n}", f"acknowledged message {message_id} lost"
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        others = "SELECT count(*) FROM messages WHERE session_id != 'kill'"
        count = conn.execute(others).fetchone()[0]
    return version, count


async def test_kill_nine_loses_no_acknowledged_message(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(ZYGOTE), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    zygote = Zygote(process)
    live = tmp_path / "live.db"
    acked: dict[int, int] = {}
    migrated = 0
    try:
        for kill in range(KILLS):
            mode = ("append", "checkpoint", "migrate")[kill % 3]
            if mode == "migrate":
                old = tmp_path / f"old{kill}.db"
                shutil.copy(OLD_STORE, old)
                mine = await zygote.kill_after(mode, old, random.choice((0, 0, 1)))
                version, count = _check(old, mine)
                assert version in (1, len(MIGRATIONS))
                assert count == OLD_MESSAGES
                migrated += version == len(MIGRATIONS)
                await (await Database.open(old)).close()  # the next start migrates
                assert _check(old, mine)[0] == len(MIGRATIONS)
                old.unlink()
            else:
                acked |= await zygote.kill_after(mode, live, random.randint(1, 8))
                _check(live, acked)
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
    assert len(acked) > KILLS  # the kills landed among real writes
