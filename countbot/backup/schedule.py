"""Backups the daemon makes on its own (`backup.every_hours`), keeping the newest `backup.keep`.

The next one is due `every_hours` after the newest archive in the folder, so a restart neither
skips one nor makes an extra. The archive is written by `countbot backup create` in a child
process: hashing and packing are Python work that, in a thread, would hold the daemon's GIL
against the event loop (docs/backup.md measures both).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import time
from pathlib import Path

from countbot.backup.names import PATTERN, default_name
from countbot.config.settings import Settings

log = logging.getLogger(__name__)


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
                target = await self._backup(folder / default_name())
                log.info("backup written: %s", target)
                await asyncio.to_thread(_prune, folder, config.keep)
            except Exception:  # a full disk or a removed folder: said, and tried again later
                log.exception("the scheduled backup into %s failed", folder)
                await asyncio.sleep(min(period, 3600.0))

    async def _backup(self, target: Path) -> Path:
        """`countbot backup create TARGET` for this instance, in a child process."""
        command = [
            sys.executable,
            "-m",
            "countbot",
            "backup",
            "create",
            str(target),
            "--low-priority",
        ]
        if self._settings.config_path is not None:
            command += ["--config", str(self._settings.config_path)]
        if self._settings.backup.include_secrets:
            command.append("--with-secrets")
        child = await asyncio.create_subprocess_exec(
            *command, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
        )
        try:
            _, err = await child.communicate()
        except asyncio.CancelledError:  # the daemon stops: the child removes its partial file
            await _interrupt(child)
            raise
        if child.returncode != 0:
            raise RuntimeError(err.decode(errors="replace").strip() or f"exit {child.returncode}")
        return target


async def _interrupt(child: asyncio.subprocess.Process) -> None:
    """Ctrl-C for the child (its cleanup runs), then a kill if it does not end."""
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(child.wait(), 10)
        except TimeoutError:
            child.kill()
            await child.wait()


def _prune(folder: Path, keep: int) -> None:
    for old in sorted(folder.glob(PATTERN))[:-keep]:
        old.unlink(missing_ok=True)


def _newest(folder: Path) -> float:
    """When the newest archive was made (0: none yet)."""
    return max((path.stat().st_mtime for path in folder.glob(PATTERN)), default=0.0)
