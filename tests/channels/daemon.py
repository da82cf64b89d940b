"""A chat channel served by a real `countbot run` process, for what only a process can show:
a restart after SIGTERM or `kill -9`, and how long SIGTERM takes to end it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sqlite3
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import yaml

from countbot.config.secret import SecretStr
from countbot.config.settings import Settings
from countbot.web.stop_deadline import MARGIN
from tests.channels.drivers import Driver

START_WAIT = 60.0
# Seconds running turns get on SIGTERM in these tests (`web.shutdown_grace`).
GRACE = 2.0
# What SIGTERM may take at most: the grace, the daemon's own margin, and a process's exit.
STOP_BOUND = GRACE + MARGIN + 3.0


def _plain(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, Path):
        return str(value)
    return value


@dataclass
class ChannelDaemon:
    """`countbot run` on `folder`, with the driver's channel enabled."""

    driver: Driver
    settings: Settings
    folder: Path
    process: asyncio.subprocess.Process | None = None
    log: list[str] = field(default_factory=list)

    def write_config(self) -> Path:
        self.driver.configure(self.settings)
        section = getattr(self.settings.channels, self.driver.name)
        model = self.settings.model
        data = {
            "model": {
                "name": model.name,
                "api_base": model.api_base,
                "api_key": _plain(model.api_key),
                "request_timeout": model.request_timeout,
                "vision": True,
            },
            "agent": {"retry_delay": 0.01},
            "workspace": str(self.settings.workspace),
            "data_dir": str(self.settings.data_dir),
            "web": {"host": "127.0.0.1", "port": 0, "shutdown_grace": GRACE},
            "channels": {
                self.driver.name: {
                    key: _plain(value) for key, value in msgspec.structs.asdict(section).items()
                }
            },
        }
        path = self.folder / "daemon.yaml"
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        return path

    async def start(self) -> None:
        config = self.write_config()
        env = {**os.environ, "NO_PROXY": "*", "PYTHONUNBUFFERED": "1"}
        env.pop("COUNTBOT_CONFIG", None)
        if self.driver.ca_pem:
            env["COUNTBOT_TEST_CA"] = self.driver.ca_pem
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.channels.daemon_main",
            "run",
            "--config",
            str(config),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=env,
        )
        await asyncio.wait_for(self._announced(), START_WAIT)
        self._reading = asyncio.create_task(self._read())
        await self.driver.ready()

    async def _announced(self) -> None:
        """Read the output (platform SDKs may log first) until the daemon says where it serves."""
        assert self.process is not None and self.process.stdout is not None
        async for raw in self.process.stdout:
            line = raw.decode(errors="replace")
            self.log.append(line)
            if re.search(r"http://127\.0\.0\.1:\d+/", line):
                return
        raise AssertionError(f"the daemon ended before serving:\n{''.join(self.log[-30:])}")

    async def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        async for line in self.process.stdout:
            self.log.append(line.decode(errors="replace"))

    async def sigterm(self) -> float:
        """Send SIGTERM; the seconds until the process ended (fails past `STOP_BOUND`)."""
        assert self.process is not None
        began = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), STOP_BOUND)
        except TimeoutError:
            raise AssertionError(
                f"SIGTERM did not end the daemon in {STOP_BOUND} s:\n{''.join(self.log[-30:])}"
            ) from None
        await self._reading
        return time.monotonic() - began

    async def kill(self) -> None:
        """`kill -9`: nothing gets to run any more."""
        assert self.process is not None
        self.process.kill()
        await self.process.wait()
        await self._reading

    def owed(self) -> int:
        """How many answers the store holds as owed (read beside the running daemon)."""
        path = self.settings.data_dir / "countbot.db"
        with contextlib.closing(sqlite3.connect(path, timeout=5)) as conn:
            (count,) = conn.execute(
                "SELECT COUNT(*) FROM channel_outbox WHERE settled_at IS NULL"
            ).fetchone()
        return int(count)


@contextlib.asynccontextmanager
async def channel_daemon(
    driver: Driver, settings: Settings, folder: Path
) -> AsyncIterator[ChannelDaemon]:
    daemon = ChannelDaemon(driver, settings, folder)
    try:
        yield daemon
    finally:
        if daemon.process is not None and daemon.process.returncode is None:
            daemon.process.kill()
            await daemon.process.wait()
