"""The audit trail: every tool call as one JSON line, secrets masked, in a rotating file.

`write` only enqueues, so a turn never waits on the disk; one writer thread appends what has
queued up in batches and flushes each batch to the OS, so a killed daemon keeps what was written.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import queue
import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from countbot.llm.unicode_repair import repair_text
from countbot.store.masker import Masker

log = logging.getLogger(__name__)

_READ_BLOCK = 64 * 1024


@dataclass(slots=True)
class _Barrier:
    """Queued behind the records it waits for; resolved once they are written."""

    stop: bool = False
    done: Future[None] = field(default_factory=Future)


class AuditLog:
    """Append-only JSONL at `path`, rotated to `path.1` … `path.<backups>` past `max_bytes`."""

    def __init__(
        self,
        path: Path,
        masker: Masker,
        *,
        max_bytes: int = 20 * 1024 * 1024,
        backups: int = 5,
    ) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.backups = backups
        self._masker = masker
        self._queue: queue.SimpleQueue[dict[str, Any] | _Barrier] = queue.SimpleQueue()
        self._file: TextIO | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._write_loop, name="countbot-audit", daemon=True)
        self._thread.start()

    def write(self, record: Mapping[str, Any]) -> None:
        """Queue one line (stamped with `ts` if it has none); returns at once."""
        if self._closed:
            raise RuntimeError(f"audit log {self.path} is closed")
        line = dict(record)
        line.setdefault("ts", time.time())
        self._queue.put(line)

    async def flush(self) -> None:
        """Wait until every line queued so far is in the file."""
        if not self._closed:
            await self._barrier(stop=False)

    async def close(self) -> None:
        """Write everything still queued, then stop the writer; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        await self._barrier(stop=True)
        await asyncio.to_thread(self._thread.join)

    async def recent(self, limit: int = 100, **filters: Any) -> list[dict[str, Any]]:
        """The newest `limit` lines whose fields equal `filters` (name="exec", …), newest first."""
        await self.flush()
        return await asyncio.to_thread(self._read_recent, max(limit, 0), filters)

    async def _barrier(self, *, stop: bool) -> None:
        barrier = _Barrier(stop)
        self._queue.put(barrier)
        await asyncio.wrap_future(barrier.done)

    # --- the writer thread -------------------------------------------------------------------

    def _write_loop(self) -> None:
        while True:
            lines: list[str] = []
            for item in self._next_batch():
                if not isinstance(item, _Barrier):
                    lines.append(self._encode(item))
                    continue
                self._append(lines)
                lines = []
                if item.stop:
                    self._close_file()
                item.done.set_result(None)
                if item.stop:
                    return
            self._append(lines)

    def _next_batch(self) -> list[dict[str, Any] | _Barrier]:
        """Wait for one item, then take whatever else has queued up meanwhile."""
        batch = [self._queue.get()]
        with contextlib.suppress(queue.Empty):
            while True:
                batch.append(self._queue.get_nowait())
        return batch

    def _encode(self, record: dict[str, Any]) -> str:
        try:
            line = json.dumps(self._masker.mask_obj(record), ensure_ascii=False, default=str)
            return repair_text(line) + "\n"
        except Exception:
            # Better a line that says what is missing than a leaked secret or a dead writer.
            log.exception("audit: could not mask or encode a record")
            return (
                json.dumps({"ts": record.get("ts"), "error": "record could not be encoded"}) + "\n"
            )

    def _append(self, lines: list[str]) -> None:
        if not lines:
            return
        whole = None  # the file's size before this write: what a failed write is cut back to
        try:
            if self._file is None:
                self._file = self._open()
            whole = self._file.tell()
            self._file.write("".join(lines))
            self._file.flush()
            if self._file.tell() >= self.max_bytes:
                self._rotate()
        except OSError:
            log.exception("audit: could not write %d line(s) to %s", len(lines), self.path)
            self._drop_partial(whole)

    def _drop_partial(self, whole: int | None) -> None:
        """After a failed write (a full disk), leave no half line: close without retrying the
        buffered rest, and cut the file back to its last whole line."""
        with contextlib.suppress(OSError):
            self._close_file()
        if whole is not None:
            with contextlib.suppress(OSError):
                os.truncate(self.path, whole)

    def _open(self) -> TextIO:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        file = self.path.open("a", encoding="utf-8")
        if file.tell() and not _ends_with_newline(self.path):
            file.write("\n")  # end a line cut short by a crash, so the next one stands alone
        return file

    def _rotate(self) -> None:
        self._close_file()
        if self.backups < 1:
            self.path.unlink()
            return
        for number in range(self.backups - 1, 0, -1):
            older = self._backup(number)
            if older.exists():
                os.replace(older, self._backup(number + 1))
        os.replace(self.path, self._backup(1))

    def _close_file(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            file.close()

    def _backup(self, number: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{number}")

    # --- reading, on a worker thread ---------------------------------------------------------

    def _read_recent(self, limit: int, filters: dict[str, Any]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        if limit == 0:
            return found
        for path in [self.path, *(self._backup(n) for n in range(1, self.backups + 1))]:
            for raw in _lines_backward(path):
                try:
                    record = json.loads(raw)
                except ValueError:
                    continue  # a line cut short by a crash
                if all(record.get(key) == value for key, value in filters.items()):
                    found.append(record)
                    if len(found) == limit:
                        return found
        return found


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as file:
        file.seek(-1, os.SEEK_END)
        return file.read(1) == b"\n"


def _lines_backward(path: Path) -> Iterator[bytes]:
    """The file's non-empty lines, last first, reading only as far back as the caller asks."""
    try:
        file = path.open("rb")
    except FileNotFoundError:
        return
    with file:
        position = file.seek(0, os.SEEK_END)
        partial = b""
        while position > 0:
            step = min(_READ_BLOCK, position)
            position -= step
            file.seek(position)
            lines = (file.read(step) + partial).split(b"\n")
            partial = lines.pop(0)  # may continue in the block before this one
            yield from (line for line in reversed(lines) if line)
        if partial:
            yield partial
