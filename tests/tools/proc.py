"""Process checks for the tests that kill subprocesses."""

from __future__ import annotations

import asyncio
from pathlib import Path


def is_running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (the container's init may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _written_pid(path: Path) -> int | None:
    text = path.read_text().strip() if path.exists() else ""
    return int(text) if text.isdigit() else None


async def read_pid(path: Path) -> int:
    """The pid a command writes to `path`, once it has written it."""
    # Another process writes the file: there is nothing to await but the file system.
    while (pid := await asyncio.to_thread(_written_pid, path)) is None:  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    return pid
