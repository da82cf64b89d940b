"""Approval questions at the terminal: `Allow? [y/N/a]` for the person running `countbot chat`.

Interactive chat asks every question here (in-process, through the runtime's broker, so the
answer is audited and "always" remembered like anywhere else). `chat -m` asks only when stdin is a
terminal; a script (stdin a pipe or a file) cannot answer, so its questions are denied at once
rather than left hanging until the timeout. Reading uses one `input()` thread at a time: a
question that ends unanswered (timeout, Ctrl-C) leaves its read pending for the next prompt, so
no typed line is lost to a question that is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from typing import Any

import click

from countbot.runtime.approvals import ApprovalAsked, ApprovalBroker, ApprovalEvent
from countbot.tools.approval import ApprovalDecision

ANSWERS: dict[str, ApprovalDecision] = {
    "y": "once",
    "yes": "once",
    "a": "always",
    "always": "always",
}
PROMPT = "Allow? [y]es once / [a]lways / [N]o: "
WHO = "cli"


class LineReader:
    """`input()` in a daemon thread; at most one read in flight, shared by whoever asks next.

    A daemon thread because `asyncio.to_thread` would leave a worker that `asyncio.run` joins on
    shutdown, blocking in `input()` until the user pressed Enter.
    """

    def __init__(self) -> None:
        self._pending: asyncio.Future[str] | None = None

    async def read(self, prompt: str) -> str:
        """The next line; raises EOFError or KeyboardInterrupt as `input()` does."""
        if self._pending is None or self._pending.done():
            self._pending = self._start(prompt)
        else:
            sys.stdout.write(prompt)  # the earlier read takes this line
            sys.stdout.flush()
        future = self._pending
        line = await asyncio.shield(future)
        return line

    def _start(self, prompt: str) -> asyncio.Future[str]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()

        def read() -> None:
            try:
                line = input(prompt)
            except BaseException as exc:  # EOFError or KeyboardInterrupt, handed to the loop
                loop.call_soon_threadsafe(_settle, future, None, exc)
            else:
                loop.call_soon_threadsafe(_settle, future, line, None)

        threading.Thread(target=read, name="countbot-prompt", daemon=True).start()
        return future


def _settle(future: asyncio.Future[str], line: str | None, exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
        future.exception()  # retrieved: nobody may be waiting any more
    else:
        future.set_result(line or "")


def print_question(tool: str, summary: str, reason: str, timeout: float) -> None:
    """Print the question to stderr, apart from the answer streaming on stdout."""
    click.secho(f"\n  ? {tool} needs your approval ({reason}):", fg="yellow", err=True)
    click.secho(f"    {summary}", bold=True, err=True)
    click.secho(f"    No answer within {timeout:g} s means no.", fg="bright_black", err=True)


async def ask(reader: LineReader | None, frame: dict[str, Any]) -> ApprovalDecision:
    """Ask about one `approval_request` (as a frame); deny at once when there is no terminal."""
    print_question(frame["tool"], frame["summary"], frame["reason"], float(frame["timeout"]))
    if reader is None:
        click.secho(
            "    Denied: no terminal to ask (answer in the web UI, or run `countbot chat`).",
            fg="red",
            err=True,
        )
        return "deny"
    try:
        line = await asyncio.wait_for(reader.read(PROMPT), float(frame["timeout"]))
    except (EOFError, KeyboardInterrupt, TimeoutError):
        return "deny"
    return ANSWERS.get(line.strip().lower(), "deny")


class TerminalApprovals:
    """The `show` of an in-process turn's approver: prompts, and hands the answer to the broker."""

    def __init__(self, broker: ApprovalBroker, reader: LineReader | None) -> None:
        self._broker = broker
        self._reader = reader
        self._asking: dict[str, asyncio.Task[None]] = {}

    def show(self, event: ApprovalEvent) -> None:
        if isinstance(event, ApprovalAsked):
            self._asking[event.id] = asyncio.create_task(self._ask(event))
            return
        task = self._asking.pop(event.id, None)
        if task is not None and not task.done():
            task.cancel()  # timed out or the turn was stopped: the prompt is moot
        if event.outcome != "answered":
            click.secho(f"    → denied ({event.outcome})", fg="red", err=True)

    async def _ask(self, asked: ApprovalAsked) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            decision = await ask(self._reader, asked.to_dict())
            self._broker.answer(asked.id, decision, WHO if self._reader else f"{WHO}:no-terminal")


def terminal_reader(reader: LineReader) -> LineReader | None:
    """`reader` when stdin is a terminal someone can answer at, else None (deny at once)."""
    return reader if sys.stdin.isatty() else None
