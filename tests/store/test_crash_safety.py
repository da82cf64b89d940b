from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from countbot.store.database import Database
from countbot.store.sessions import SessionStore

WRITER = Path(__file__).with_name("append_until_killed.py")


async def test_every_append_reported_before_a_kill_is_readable_after(tmp_path: Path) -> None:
    path = tmp_path / "countbot.db"
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(WRITER), str(path), stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    committed: list[int] = []
    try:
        while len(committed) < 300:
            line = await process.stdout.readline()
            assert line, "the writer exited before it was killed"
            committed.append(int(line))
    finally:
        process.send_signal(signal.SIGKILL)
        await process.wait()
    assert process.returncode == -signal.SIGKILL

    db = await Database.open(path)
    try:
        assert await db.run(lambda c: c.execute("PRAGMA integrity_check").fetchone()[0]) == "ok"
        sessions = SessionStore(db)
        stored = await sessions.messages("crash", limit=1_000_000)
        info = await sessions.get("crash")
        # The session can be appended to as if nothing happened.
        next_id = await sessions.append("crash", {"type": "user", "content": "after"})
    finally:
        await db.close()

    stored_ids = [r["id"] for r in stored]
    assert stored_ids[: len(committed)] == committed
    assert [r["content"] for r in stored] == [f"m{n}" for n in range(len(stored))]
    assert info is not None and info.message_count == len(stored)
    assert next_id > stored_ids[-1]
