"""One daemon per data folder: an OS lock on `daemon.lock`, and `daemon.json` saying where it is.

The lock is held for the daemon's life and released by the OS if it dies, so a crash never
leaves the folder locked; `daemon.json` lets `countbot chat` find the running daemon.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

_WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}
LOCK_FILE = "daemon.lock"
INFO_FILE = "daemon.json"


class AlreadyRunningError(RuntimeError):
    """Another daemon holds this data folder; the message says which one."""


@dataclass(frozen=True, slots=True)
class DaemonInfo:
    pid: int
    host: str
    port: int
    started_at: float

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def local_url(self, scheme: str = "http") -> str:
        return local_url(self.host, self.port, scheme)


def local_url(host: str, port: int, scheme: str = "http") -> str:
    """Where a client on this machine reaches the daemon (a wildcard bind means loopback)."""
    host = _WILDCARDS.get(host, host)
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


class InstanceLock:
    """Held by the running daemon (blocking file I/O: call before or beside the event loop)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        handle = open(self.data_dir / LOCK_FILE, "a+")  # noqa: SIM115 - held until release()
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            running = read_daemon_info(self.data_dir)
            where = f" (pid {running.pid}, {running.url})" if running else ""
            raise AlreadyRunningError(
                f"another CountBot daemon is already running on {self.data_dir}{where}; "
                "stop it first, or give this one its own data_dir"
            ) from None
        self._file = handle

    def publish(self, host: str, port: int) -> DaemonInfo:
        """Write daemon.json (atomically) once the daemon listens."""
        info = DaemonInfo(os.getpid(), host, port, time.time())
        target = self.data_dir / INFO_FILE
        temp = target.with_name(f".{INFO_FILE}.{os.getpid()}.tmp")
        temp.write_text(json.dumps(asdict(info)), encoding="utf-8")
        os.replace(temp, target)
        return info

    def release(self) -> None:
        if self._file is None:
            return
        with contextlib.suppress(FileNotFoundError):
            (self.data_dir / INFO_FILE).unlink()
        fcntl.flock(self._file, fcntl.LOCK_UN)
        self._file.close()
        self._file = None


def read_daemon_info(data_dir: Path) -> DaemonInfo | None:
    """The daemon that says it runs on `data_dir`, if its process is alive."""
    try:
        data = json.loads((data_dir / INFO_FILE).read_text(encoding="utf-8"))
        info = DaemonInfo(
            int(data["pid"]), str(data["host"]), int(data["port"]), float(data["started_at"])
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(info.pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, owned by someone else
    return info
