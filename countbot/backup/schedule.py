"""Backups the daemon makes on its own (`backup.every_hours`), keeping the newest `backup.keep`.

The next one is due `every_hours` after the newest archive in the folder, so a restart neither
skips one nor makes an extra. The archive is written in a worker thread: the event loop keeps
serving turns meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path

from countbot.config.settings import BackupSettings, Settings

log = logging.getLogger(__name__)
_PATTERN = "countbot-backup-*.tar.gz"


def backup_folder(settings: Settings) -> Path:
    """Where scheduled backups go: `backup.folder` (relative: to the data folder)."""
    return settings.data_dir / (settings.backup.folder or "backups")


class BackupSchedule:
    """The daemon's task that makes the scheduled backups; `start` does nothing when off."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._settings.backup.every_hours > 0:
            self._task = asyncio.create_task(self._run(), name="countbot-backups")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        folder, config = backup_folder(self._settings), self._settings.backup
        period = config.every_hours * 3600
        while True:
            newest = await asyncio.to_thread(_newest, folder)
            await asyncio.sleep(max(0.0, newest + period - time.time()))
            try:
                await asyncio.to_thread(_backup_and_prune, self._settings, folder, config)
            except Exception:  # a full disk or a removed folder: said, and tried again later
                log.exception("the scheduled backup into %s failed", folder)
                await asyncio.sleep(min(period, 3600.0))


def _backup_and_prune(settings: Settings, folder: Path, config: BackupSettings) -> None:
    # Imported here, in the worker thread: a daemon that never backs up never loads tarfile.
    from countbot.backup.create import create_backup, default_name
    from countbot.backup.source import Instance

    target = folder / default_name()
    create_backup(Instance.of(settings), target, include_secrets=config.include_secrets)
    log.info("backup written: %s", target)
    for old in sorted(folder.glob(_PATTERN))[: -config.keep]:
        old.unlink(missing_ok=True)


def _newest(folder: Path) -> float:
    """When the newest archive was made (0: none yet)."""
    return max((path.stat().st_mtime for path in folder.glob(_PATTERN)), default=0.0)
