"""`LocalServer`: starts the model's child server, checks its health, restarts it, stops it.

The child is started on first use (a daemon that never gets a message never loads the model),
answers on a loopback port only with a random key, and is watched: if it exits while the daemon
still wants it, it is started again, and the turn that was streaming from it ends with an error
that says so (`DirectProvider`). Stopping closes its stdin, then terminates, then kills.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from countbot.llm.local_endpoint import LocalServerError

log = logging.getLogger(__name__)

_START_TIMEOUT = 120.0  # loading a multi-GB model from a slow disk takes a while
_STOP_GRACE = 5.0
_RESTART_PAUSE = 1.0  # between restarts of a child that keeps dying


@dataclass(frozen=True, slots=True)
class LocalServerOptions:
    """What the child runs: the GGUF file and the small-machine limits from the settings."""

    model: Path
    context_size: int = 4096
    threads: int = 0
    cache_ram_mb: int = 256

    def resolved_threads(self) -> int:
        """`threads`, or half the cores (at most 4) when it is 0: the daemon needs a core too."""
        return self.threads or max(1, min(4, (os.cpu_count() or 2) // 2))


class LocalServer:
    """One child server for one model file; `url()` starts it or waits for it."""

    def __init__(self, options: LocalServerOptions) -> None:
        self.options = options
        self.api_key = secrets.token_urlsafe(24)
        self._process: asyncio.subprocess.Process | None = None
        self._base: str | None = None
        self._starting: asyncio.Lock | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._stopping = False
        self._crash: tuple[float, int] | None = None  # (loop time, exit code) of the last crash
        self.restarts = 0
        # When a request last started or ended (`time.monotonic()`), and how many are under way:
        # what idleness counts from.
        self.last_used = time.monotonic()
        self.in_flight = 0

    @property
    def pid(self) -> int | None:
        """The running child's process id (None before the first start or after a stop)."""
        process = self._process
        return process.pid if process is not None and process.returncode is None else None

    def running(self) -> bool:
        """Whether the child is up and has told us its address."""
        return self.pid is not None and self._base is not None

    async def url(self) -> str:
        """The base URL of the child's OpenAI-compatible API (`.../v1`), started if needed; a
        request begins, under way until its `done()`."""
        base = await self._started()
        self.last_used = time.monotonic()
        self.in_flight += 1
        return base + "/v1"

    async def _started(self) -> str:
        """The child's address, started first if it is not running."""
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if not self.running():
                self._stopping = False
                await self._start()
        assert self._base is not None
        return self._base

    def done(self) -> None:
        """A request that `url()` began has ended (answered, failed or cancelled)."""
        self.in_flight = max(0, self.in_flight - 1)
        self.last_used = time.monotonic()

    async def stop_if_idle(self, idle: float) -> bool:
        """Stop the child if no request is under way and none ended in the last `idle` seconds
        (never while it is starting); whether it stopped."""
        if self._starting is None:
            return False
        async with self._starting:
            unused = time.monotonic() - self.last_used >= idle
            if self.in_flight or not self.running() or not unused:
                return False
            await self.stop()
            return True

    async def _start(self) -> None:
        import httpx  # imported at first use: the daemon loads this module at start-up

        model = self.options.model
        if not model.is_file():
            raise LocalServerError(
                f"the local model file {model} does not exist: "
                "run `countbot models pull NAME` or set model.name to a .gguf file"
            )
        self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "countbot.local_model.server_main",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            # Its own session: a Ctrl-C in the daemon's terminal goes to the daemon's process
            # group only, so the child is stopped on purpose, never killed under the watcher.
            # It still dies with its owner: its stdin closes.
            start_new_session=True,
        )
        options = {
            "model": str(model),
            "context_size": self.options.context_size,
            "threads": self.options.resolved_threads(),
            "cache_ram_mb": self.options.cache_ram_mb,
            "api_key": self.api_key,
        }
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(json.dumps(options).encode() + b"\n")
        await self._process.stdin.drain()
        try:
            async with asyncio.timeout(_START_TIMEOUT):
                line = await self._process.stdout.readline()
            self._base = str(json.loads(line)["address"])
            await self._check_health()
        except (TimeoutError, ValueError, KeyError, OSError, httpx.HTTPError) as exc:
            code = self._process.returncode
            await self._terminate()
            why = f"it exited with code {code}" if code is not None else f"{exc!r}"
            message = f"the local model server for {model.name} did not start: {why}"
            raise LocalServerError(message) from None
        log.info("local model %s serving at %s (pid %s)", model.name, self._base, self.pid)
        self._watcher = asyncio.create_task(self._watch(self._process))

    async def _check_health(self) -> None:
        import httpx

        async with httpx.AsyncClient(timeout=10.0, trust_env=False) as client:
            reply = await client.get(f"{self._base}/health")
        if reply.status_code != 200:
            raise LocalServerError(f"health check answered {reply.status_code}")

    async def _watch(self, process: asyncio.subprocess.Process) -> None:
        """Restart the child when it exits on its own (a crash, the OOM killer)."""
        code = await process.wait()
        if self._stopping or process is not self._process:
            return
        log.warning("the local model server exited with code %s; restarting it", code)
        self._crash = (asyncio.get_running_loop().time(), code)
        self._base = None
        self.restarts += 1
        await asyncio.sleep(_RESTART_PAUSE)
        if self._stopping:
            return
        try:
            await self._started()
        except LocalServerError as exc:
            log.error("%s", exc)

    async def exit_code(self, wait: float = 1.0) -> int | None:
        """The exit code of a child that just died, waiting up to `wait` s for a dying one to
        be reaped (a broken connection arrives before the exit is seen); None if it lives."""
        if self._crash is not None and asyncio.get_running_loop().time() - self._crash[0] < 10:
            return self._crash[1]
        process = self._process
        if process is None or self._stopping:
            return None
        try:
            async with asyncio.timeout(wait):
                return await process.wait()
        except TimeoutError:
            return None

    async def stop(self) -> None:
        """Stop the child and its watcher; a later `url()` starts it again."""
        self._stopping = True
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None
        await self._terminate()

    async def _terminate(self) -> None:
        process, self._process, self._base = self._process, None, None
        if process is None or process.returncode is not None:
            return
        if process.stdin is not None:
            process.stdin.close()
        for signal_child in (None, process.terminate, process.kill):
            if signal_child is not None:
                signal_child()
            try:
                async with asyncio.timeout(_STOP_GRACE):
                    await process.wait()
                return
            except TimeoutError:
                continue
