"""A zygote for kill -9 tests: imports the store once, then forks one writer per request.

Run by test_kill_nine.py. Each line on stdin is `<mode> <database>`; the zygote forks a child,
prints `child <pid>`, and prints `ended` once the test has killed it. The child opens the
database (migrating it if it is old), prints `ack <id> <n>` after each message it appended has
been committed, and never stops by itself. Modes: `append`; `checkpoint` (a second connection
folds the WAL into the file without pause meanwhile); `migrate` (the same as append: the test
hands it a store written by an old commit, so the kill may land inside the migration).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import sys
import threading
from pathlib import Path

from countbot.store.database import Database
from countbot.store.sessions import SessionStore


async def _write(path: Path, checkpoint: bool) -> None:
    db = await Database.open(path)
    if checkpoint:
        threading.Thread(target=_checkpoint, args=(path,), daemon=True).start()
    sessions = SessionStore(db)
    n = 0
    while True:
        message_id = await sessions.append("kill", {"type": "user", "content": f"m{n}"})
        os.write(1, f"ack {message_id} {n}\n".encode())  # one write: a kill never cuts a line
        n += 1


def _checkpoint(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(path, timeout=5)) as conn:
        while True:
            with contextlib.suppress(sqlite3.OperationalError):  # busy: the writer holds it
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


def main() -> None:
    for line in sys.stdin:
        mode, database = line.split()
        pid = os.fork()
        if pid == 0:
            asyncio.run(_write(Path(database), mode == "checkpoint"))
        print(f"child {pid}", flush=True)
        os.waitpid(pid, 0)
        print("ended", flush=True)


if __name__ == "__main__":
    main()
