"""Editing config.yaml (or secrets.yaml) while the daemon runs takes effect, or says why not.

The files' modification times are polled off the event loop every `POLL_SECONDS`. A change is
loaded and validated like a start-up read; a valid file is applied (`live_settings`), a bad one
leaves the running settings untouched. Either way the outcome goes to the log and to every open
browser tab (the `status` frame's `config` field), so a user who edits the file sees whether it
worked, what was wrong, or which sections wait for a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

from countbot.config.errors import ConfigError
from countbot.config.loader import load_settings
from countbot.config.secrets_file import secrets_path
from countbot.web.context import DaemonContext
from countbot.web.live_settings import apply_settings
from countbot.web.notices import push_status

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0

Stamp = tuple[tuple[int, int] | None, ...]


class ConfigWatcher:
    """Watches the daemon's config file; `start()` begins polling, `stop()` ends it."""

    def __init__(self, daemon: DaemonContext, path: Path) -> None:
        self._daemon = daemon
        self._files = (path, secrets_path(path))
        self._task: asyncio.Task[None] | None = None
        self._stamp: Stamp = ()

    async def start(self) -> None:
        self._stamp = await asyncio.to_thread(self._look)
        self._task = asyncio.create_task(self._poll(), name="config-watch")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _look(self) -> Stamp:
        """Each file's (mtime in ns, size), None for a missing one: blocking, run in a thread."""
        stamps = []
        for file in self._files:
            try:
                info = file.stat()
            except OSError:
                stamps.append(None)
            else:
                stamps.append((info.st_mtime_ns, info.st_size))
        return tuple(stamps)

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            stamp = await asyncio.to_thread(self._look)
            if stamp != self._stamp:
                self._stamp = stamp
                await self.reload()

    async def reload(self) -> None:
        """Load the file now; apply it if valid, else keep the running settings and say why."""
        state = self._daemon.config_state
        try:
            fresh = await asyncio.to_thread(load_settings, self._files[0])
        except ConfigError as exc:
            state.error = str(exc)
            log.warning("%s; the running settings are kept", exc)
        else:
            state.error = ""
            state.restart = await apply_settings(self._daemon, fresh)
            waiting = f" ({', '.join(state.restart)} after a restart)" if state.restart else ""
            log.info("config file changed: applied%s", waiting)
        push_status(self._daemon)
