"""A child Python process that answers one JSON line per request: the daemon's handle on it.

The memory index's vector worker and the token counter's worker are such children: each holds
something the daemon should not (a model and its vectors; a tokenizer whose load would hold the
daemon's GIL), and ends with its memory. The child is started at the first call with one JSON
line of set-up, answers requests one at a time, and is ended after `idle_unload` seconds without
a call (the next call starts it again).

A request runs as a task of its own, so a caller that stops waiting (a cancelled turn, or a call
past its `wait`) does not cut the pipe mid-answer: the answer is read and dropped, and the child
stays in step and warm. Only a request past `timeout` (a child that hangs) or a broken pipe kills
it. Every failure is a `WorkerError`. A request to an idle child is written as it is asked, not
a pass of the loop later by its task: auto-recall's search starts the child's work while the
turn goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Mapping
from typing import Any

from countbot.common.heap import CHILD_ENV


class WorkerError(RuntimeError):
    """The child failed, hung, exited, or did not answer within the caller's wait."""


class LineWorker:
    """See the module docstring: `module` is run as `python -m module`."""

    def __init__(
        self,
        module: str,
        setup: Mapping[str, Any],
        *,
        idle_unload: float,
        timeout: float,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._module = module
        self._setup = dict(setup)
        self._env = dict(env or {})
        self._idle_unload = idle_unload
        self._timeout = timeout
        self._process: asyncio.subprocess.Process | None = None
        # Done when the last exchange asked for (or restart) is over: each waits for the one
        # before it, so requests reach the child one at a time and in order.
        self._last: asyncio.Future[None] | None = None
        self._last_used = 0.0
        self._idle_timer: asyncio.TimerHandle | None = None
        self._requests: set[asyncio.Task[Any]] = set()
        self._ending: set[asyncio.Task[None]] = set()

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs (the tests and the benches look)."""
        process = self._process
        return process.pid if process is not None and process.returncode is None else None

    async def call(self, request: dict[str, Any], wait: float | None = None) -> dict[str, Any]:
        """The child's answer to `request`; `wait` bounds this caller's wait, not the request."""
        previous, done = self._queue()
        # An idle running child reads the request now.
        written = self._running() if previous is None or previous.done() else None
        if written is not None:
            assert written.stdin is not None
            written.stdin.write(_line(request))
        exchange = asyncio.create_task(self._exchange(request, previous, done, written))
        self._requests.add(exchange)
        exchange.add_done_callback(_read_outcome)
        exchange.add_done_callback(self._requests.discard)
        try:
            async with asyncio.timeout(wait):
                return await asyncio.shield(exchange)
        except TimeoutError as exc:  # the answer still comes; this caller stops waiting
            raise WorkerError(f"{self._module} did not answer within {wait} s") from exc

    def send(self, request: dict[str, Any]) -> None:
        """Write an unanswered line to a running child (one that starts later never sees it):
        the child reads it after the request it may be answering."""
        process = self._running()
        if process is not None:
            assert process.stdin is not None
            process.stdin.write(_line(request))

    def _running(self) -> asyncio.subprocess.Process | None:
        """The child, while it runs and its stdin is open."""
        process = self._process
        if process is None or process.returncode is not None:
            return None
        assert process.stdin is not None
        return None if process.stdin.is_closing() else process

    def _queue(self) -> tuple[asyncio.Future[None] | None, asyncio.Future[None]]:
        """A turn with the child: the end of the one before it, and this one's end to set."""
        previous, done = self._last, asyncio.get_running_loop().create_future()
        self._last = done
        return previous, done

    async def _exchange(
        self,
        request: dict[str, Any],
        previous: asyncio.Future[None] | None,
        done: asyncio.Future[None],
        written: asyncio.subprocess.Process | None,
    ) -> dict[str, Any]:
        """Send `request` (unless `written` to that child already) once `previous` is over,
        and read its answer; `done` is set when this turn with the child is over."""
        try:
            if previous is not None:
                await asyncio.shield(previous)
            finished = False
            try:
                async with asyncio.timeout(self._timeout):
                    process = written or await self._started()
                    assert process.stdin is not None and process.stdout is not None
                    if written is None:
                        process.stdin.write(_line(request))
                    await process.stdin.drain()
                    answer = json.loads(await process.stdout.readline() or b"null")
                finished = isinstance(answer, dict)
            except (TimeoutError, OSError, ValueError) as exc:
                raise WorkerError(f"{self._module} failed: {exc!r}") from exc
            finally:
                self._used()
                if not finished:  # hung, died, or cut off mid-answer: its stream is lost
                    self._end(kill=True)
        finally:
            _follow(done, previous)
        if not finished:
            raise WorkerError(f"{self._module} exited")
        if "error" in answer:
            raise WorkerError(str(answer["error"]))
        return answer

    async def _started(self) -> asyncio.subprocess.Process:
        if self._process is None or self._process.returncode is not None:
            process = await asyncio.create_subprocess_exec(
                *(sys.executable, "-m", self._module),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env={**CHILD_ENV, **os.environ, **self._env},
            )
            assert process.stdin is not None
            process.stdin.write(_line(self._setup))  # before any `send` can be written
            self._process = process
        return self._process

    def _used(self) -> None:
        self._last_used = time.monotonic()
        if self._idle_timer is None:
            loop = asyncio.get_running_loop()
            self._idle_timer = loop.call_later(self._idle_unload, self._end_if_idle)

    def _end_if_idle(self) -> None:
        """End the child once no call came for `idle_unload` seconds; else look again later."""
        self._idle_timer = None
        left = self._last_used + self._idle_unload - time.monotonic()
        busy = self._last is not None and not self._last.done()
        if left > 0 or busy:  # a call running now arms the timer when it ends
            loop = asyncio.get_running_loop()
            self._idle_timer = loop.call_later(max(left, 0.1), self._end_if_idle)
        else:
            self._end(kill=False)

    def _end(self, *, kill: bool) -> None:
        """End the child: closing its stdin lets it exit; `kill` when it is mid-answer."""
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        if kill:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        elif process.stdin is not None:
            process.stdin.close()
        task = asyncio.get_running_loop().create_task(_reaped(process))
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    async def restart(self) -> None:
        """End the child after the request running now: the next call starts a fresh one."""
        previous, done = self._queue()
        try:
            if previous is not None:
                await asyncio.shield(previous)
            self._end(kill=False)
        finally:
            _follow(done, previous)

    async def close(self) -> None:
        """End the child now and wait for it."""
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        for task in list(self._requests):
            task.cancel()  # a request still running kills the child as it ends
        await asyncio.gather(*self._requests, return_exceptions=True)
        self._end(kill=False)
        await asyncio.gather(*self._ending, return_exceptions=True)


def _follow(done: asyncio.Future[None], previous: asyncio.Future[None] | None) -> None:
    """Set `done`, at once or when `previous` is (a turn cancelled while it waited for the one
    before it must not let the next go first)."""
    if previous is None or previous.done():
        done.set_result(None)
    else:
        previous.add_done_callback(lambda _: done.set_result(None))


def _read_outcome(task: asyncio.Task[Any]) -> None:
    """An abandoned request's failure was its caller's to see, or no one's: read, not logged."""
    if not task.cancelled():
        task.exception()


def _line(message: dict[str, Any]) -> bytes:
    try:
        return json.dumps(message, ensure_ascii=False).encode() + b"\n"
    except UnicodeEncodeError:  # a lone surrogate: escaped, the child reads it back as it was
        return json.dumps(message).encode() + b"\n"


async def _reaped(process: asyncio.subprocess.Process) -> None:
    """Wait for an ended child, killing it if it does not exit on its own."""
    try:
        await asyncio.wait_for(process.wait(), 10.0)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
