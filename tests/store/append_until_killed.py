"""Appends messages forever, printing each id once `append` has returned (i.e. committed).

Run by test_crash_safety.py, which SIGKILLs this process mid-stream.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from countbot.store.database import Database
from countbot.store.sessions import SessionStore


async def main(path: Path) -> None:
    sessions = SessionStore(await Database.open(path))
    n = 0
    while True:
        message_id = await sessions.append("crash", {"type": "user", "content": f"m{n}"})
        print(message_id, flush=True)
        n += 1


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
