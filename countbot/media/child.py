"""Runs one job of `countbot.media.worker` (or a program: ffmpeg, espeak-ng) in a child process:
bytes in on stdin, bytes out.

A child per job costs a Python start (~0.1 s plus the library's import), and buys what a thread
cannot: the recognizer and the converters are CPU-bound C and pure Python that would hold the
GIL, a hostile document can only exhaust its own memory limit, and a timeout or a cancelled turn
kills the child outright.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Sequence

# What a child may print on stdout (a transcript, a document's text).
MAX_OUTPUT = 64 * 1024 * 1024


class JobFailed(Exception):
    """The child could not do its job; the message says why, in words a user can act on."""


async def run_job(job: str, data: bytes, *args: str, time_limit: float) -> bytes:
    """Run `python -m countbot.media.worker JOB ARGS...` with `data` on stdin; its stdout."""
    command = [sys.executable, "-m", "countbot.media.worker", job, *args]
    return await run_program(command, data, time_limit=time_limit)


async def run_program(command: Sequence[str], data: bytes, *, time_limit: float) -> bytes:
    """Run `command` with `data` on stdin and return its stdout.

    Raises `JobFailed` with the program's last stderr line when it fails, when it is not
    installed, or when it runs past `time_limit` seconds (it is killed then, and when the caller
    is cancelled).
    """
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except FileNotFoundError:
        raise JobFailed(f"{command[0]} is not installed") from None
    try:
        async with asyncio.timeout(time_limit):
            out, err = await process.communicate(data)
    except TimeoutError:
        raise JobFailed(f"gave up after {time_limit:.0f} s") from None
    finally:
        if process.returncode is None:  # timed out or cancelled: the child goes too
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    if process.returncode != 0:
        lines = err.decode("utf-8", "replace").strip().splitlines()
        raise JobFailed(lines[-1] if lines else f"{command[0]} exited with {process.returncode}")
    if len(out) > MAX_OUTPUT:
        raise JobFailed("the result is too large")
    return out
