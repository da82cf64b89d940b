"""Watched folders: a new or changed file starts a turn with its path, its kind and its text.

A file is taken in once it has been quiet for `settle_seconds` (every change resets its timer),
so a burst of writes, or a file that keeps growing, is one event when it settles, not one per
write. Each version (`<mtime_ns>:<size>`) of a file is one event: the ledger's key is
`<name>@<version>` and `trigger_files` remembers the version taken in, so a restart looks at the
folder once and takes in what changed while the daemon was down, and nothing twice. The files
that are there when a folder is first watched are not events. Only the folder's own files are
watched (not its subfolders); hidden and partial files (`.x`, `x~`, `.part`, `.tmp`, ...) are
left alone. Documents are read through the document reader (`countbot/media/`) when the turn
runs; a symlink is never followed (a link to the owner's keys is not a document).
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

from countbot.config.settings import FolderSettings, TriggersSettings
from countbot.media.documents import (
    MAX_DOCUMENT_BYTES,
    DocumentConverter,
    DocumentRefused,
    document_kind,
)
from countbot.triggers.dispatcher import Dispatcher
from countbot.triggers.events import TriggerEvent, TriggerEvents
from countbot.triggers.inotify import FolderWatch, open_watch

log = logging.getLogger(__name__)

_PARTIAL = ("~", ".part", ".partial", ".crdownload", ".download", ".tmp", ".swp")
# The `trigger_files` row saying the folder is watched (its first files are not events).
_WATCHED = ""


def folder_path(settings: FolderSettings, workspace: Path) -> Path:
    """Where the folder is: a relative path is inside the workspace."""
    return settings.path if settings.path.is_absolute() else workspace / settings.path


def _version(folder: Path, name: str) -> str | None:
    """The file's version, or None when it is no regular file (gone, a folder, a link)."""
    try:
        found = os.stat(folder / name, follow_symlinks=False)
    except OSError:
        return None
    return f"{found.st_mtime_ns}:{found.st_size}" if stat.S_ISREG(found.st_mode) else None


def _listing(folder: Path) -> dict[str, str]:
    found = {}
    with os.scandir(folder) as entries:
        for entry in entries:
            if _ignored(entry.name):
                continue
            version = _version(folder, entry.name)
            if version is not None:
                found[entry.name] = version
    return found


def _ignored(name: str) -> bool:
    return name.startswith(".") or name.lower().endswith(_PARTIAL)


class FolderTrigger:
    """Watches one folder for its trigger (see the module docstring)."""

    def __init__(
        self,
        name: str,
        settings: FolderSettings,
        folder: Path,
        events: TriggerEvents,
        dispatcher: Dispatcher,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name = name
        self._settle = settings.settle_seconds
        self._folder = folder
        self._events = events
        self._dispatcher = dispatcher
        self._clock = clock
        self._versions: dict[str, str] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._watch: FolderWatch | None = None
        self._polling: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Look at the folder once (what changed while the daemon was down), then watch it. A
        folder that cannot be made or read is logged and not watched: the daemon starts anyway."""
        try:
            await asyncio.to_thread(self._folder.mkdir, parents=True, exist_ok=True)
            listing = await asyncio.to_thread(_listing, self._folder)
        except OSError as exc:
            log.warning("folder trigger %s: cannot watch %s: %s", self.name, self._folder, exc)
            return
        self._versions = await self._events.versions(self.name)
        if _WATCHED not in self._versions:  # first watched: what is there is no news
            for name, version in listing.items():
                await self._events.set_version(self.name, name, version)
            await self._events.set_version(self.name, _WATCHED, "watched")
            self._versions = await self._events.versions(self.name)
        self._watch = open_watch(self._folder, self.changed)
        if self._watch is None:
            log.info("folder trigger %s: no inotify here, looking every second", self.name)
            self._polling = asyncio.create_task(self._poll())
        await self._look()

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.close()
        if self._polling is not None:
            self._polling.cancel()
        for timer in self._timers.values():
            timer.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def changed(self, name: str) -> None:
        """`name` changed: take it in once it has been quiet for the settle time."""
        if _ignored(name):
            return
        timer = self._timers.pop(name, None)
        if timer is not None:
            timer.cancel()
        self._timers[name] = asyncio.get_running_loop().call_later(
            self._settle, self._settled, name
        )

    def _settled(self, name: str) -> None:
        self._timers.pop(name, None)
        task = asyncio.create_task(self._take(name))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _take(self, name: str) -> None:
        try:
            version = await asyncio.to_thread(_version, self._folder, name)
            known = self._versions.get(name)
            if version == known:
                return
            if version is None:  # gone: a file of that name coming back is new again
                await self._events.set_version(self.name, name, None)
                self._versions.pop(name, None)
                return
            change = "new" if known is None else "changed"
            payload = {"name": name, "change": change, "size": int(version.split(":")[1])}
            now = self._clock()
            recorded = await self._events.record(
                self.name, "folder", f"{name}@{version}", payload, now
            )
            await self._events.set_version(self.name, name, version)
            self._versions[name] = version
            if recorded.new:
                self._dispatcher.received(recorded.id, self.name, now)
        except Exception:
            log.exception("folder trigger %s: %s could not be taken in", self.name, name)

    async def _look(self) -> None:
        """Compare the folder with what was taken in; what differs goes through `changed`."""
        try:
            listing = await asyncio.to_thread(_listing, self._folder)
        except OSError as exc:
            log.warning("folder trigger %s: cannot read %s: %s", self.name, self._folder, exc)
            return
        for name in (set(listing) | set(self._versions)) - {_WATCHED}:
            if listing.get(name) != self._versions.get(name) and name not in self._timers:
                self.changed(name)

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            await self._look()


class FolderReader:
    """A folder event as its turn reads it: the file's path, kind and text (documents through
    the document reader, when the turn runs)."""

    def __init__(self, settings: TriggersSettings, workspace: Path) -> None:
        self._settings = settings
        self._workspace = workspace
        self._converter = DocumentConverter()

    async def describe(self, event: TriggerEvent) -> tuple[str, str]:
        folder_settings = self._settings.folders.get(event.trigger)
        name = str(event.payload["name"])
        if folder_settings is None:
            return f"File {name!r}", "[the folder is no longer watched]"
        path = folder_path(folder_settings, self._workspace) / name
        kind = document_kind(name) or "binary"
        heading = (
            f"File {name!r} in watched folder {event.trigger!r} ({event.payload['change']}, "
            f"{kind}, {event.payload['size']:,} bytes; path {path}):"
        )
        return heading, await self._text(path, kind)

    async def _text(self, path: Path, kind: str) -> str:
        try:
            data = await asyncio.to_thread(_read_regular, path)
        except OSError as exc:
            return f"[the file cannot be read now: {exc.strerror or exc}]"
        if kind == "binary":
            return "[not a document: its contents are not read]"
        try:
            document = await self._converter.convert(data, kind)
        except DocumentRefused as exc:
            return f"[it cannot be read: {exc}]"
        return document.text if document.text.strip() else f"[{document.empty_reason()}]"


def _read_regular(path: Path) -> bytes:
    """The file's bytes, never through a symlink, at most what a document may have (+1)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        return file.read(MAX_DOCUMENT_BYTES + 1)
