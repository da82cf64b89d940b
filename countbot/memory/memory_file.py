"""The long-term memory file (workspace/MEMORY.md): safe reads, atomic writes, no lost updates.

Several writers share it: the model's memory tools, overflow summaries from every session, and
possibly a second process (the CLI beside the daemon). Every change is a read-modify-write under
an asyncio lock (so waiting writers do not each hold a worker thread) and an OS lock on its
folder (so another process cannot interleave), and lands via temp file + fsync + `os.replace`,
so a reader or a crash never sees half a file.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from countbot.memory.file_lock import folder_lock
from countbot.memory.search import MemoryHit, search_notes


class MemoryEditError(ValueError):
    """An edit that cannot be applied as asked (text missing or ambiguous)."""


class MemoryFile:
    """Long-term memory as one Markdown file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # Where versions before the folder lock kept theirs: removed at the next write.
        self._old_lock = path.with_name(f".{path.name}.lock")
        self._lock = asyncio.Lock()

    async def read(self) -> str:
        """The whole file; a missing file is empty memory."""
        return await asyncio.to_thread(self._read_sync)

    async def write(self, content: str) -> None:
        """Replace the whole file."""
        await self.update(lambda _old: content)

    async def append(self, section: str) -> None:
        """Add `section` at the end, separated from what is there by a blank line."""
        await self.update(lambda old: _appended(old, section))

    async def append_once(self, marker: str, section: str) -> bool:
        """Append `section` unless `marker` is already in the file; returns whether it did."""
        appended = False

        def change(old: str) -> str:
            nonlocal appended
            if marker in old:
                return old
            appended = True
            return _appended(old, section)

        await self.update(change)
        return appended

    async def replace(self, old: str, new: str) -> None:
        """Replace the one exact occurrence of `old`; raises MemoryEditError otherwise."""
        if not old:
            raise MemoryEditError("the text to replace is empty")

        def change(content: str) -> str:
            count = content.count(old)
            if count == 0:
                raise MemoryEditError("the text to replace was not found in MEMORY.md")
            if count > 1:
                raise MemoryEditError(
                    f"the text to replace occurs {count} times; include more surrounding text"
                )
            return content.replace(old, new, 1)

        await self.update(change)

    async def update(self, change: Callable[[str], str]) -> None:
        """Atomically apply `change` (old content -> new content), under both locks.

        `change` runs in a worker thread while the locks are held; an exception it raises
        leaves the file untouched and propagates.
        """
        async with self._lock:
            await asyncio.to_thread(self._update_sync, change)

    async def search(self, query: str, limit: int = 10) -> list[MemoryHit]:
        """Entries containing every word of `query`, best first (see `search_notes`)."""
        content = await self.read()
        return search_notes(content, query, limit)

    # --- blocking parts, run in worker threads ------------------------------------------------

    def _read_sync(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    def _update_sync(self, change: Callable[[str], str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with folder_lock(self.path.parent):
            self._old_lock.unlink(missing_ok=True)
            old = self._read_sync()
            new = change(old)
            if new != old:
                self._write_atomic(new)

    def _write_atomic(self, content: str) -> None:
        fd, temp_name = tempfile.mkstemp(
            dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
        )
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(content)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp_name, self.path)
        except BaseException:
            Path(temp_name).unlink(missing_ok=True)
            raise


def _appended(old: str, section: str) -> str:
    section = section.strip("\n") + "\n"
    if not old.strip():
        return section
    return old.rstrip("\n") + "\n\n" + section
