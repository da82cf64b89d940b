"""`countbot chat`: one message (`-m`) or an interactive prompt with streaming output."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator

import click

from countbot.agent.cancel import CancelToken
from countbot.agent.events import (
    AgentEvent,
    TextChunk,
    ToolEnd,
    ToolStart,
    TurnCancelled,
    TurnError,
)
from countbot.cli.approval_prompt import LineReader, TerminalApprovals, terminal_reader
from countbot.cli.daemon_client import answer_via_daemon
from countbot.config.settings import Settings
from countbot.runtime.approvals import TurnAddress
from countbot.runtime.assembly import Runtime, open_runtime
from countbot.tools.approval import Approver

EXIT_WORDS = {"exit", "quit", "/exit", "/quit", ":q"}


async def run_once(settings: Settings, message: str, session_id: str) -> int:
    """Run one turn (through the running daemon if there is one) and print it; exit 1 on error.

    Questions are asked at the terminal when stdin is one, else denied at once.
    """
    reader = terminal_reader(LineReader())
    answer = await answer_via_daemon(settings, message, session_id, reader)
    if answer is None:
        runtime = await open_runtime(settings)
        try:
            token = CancelToken()
            approver = _approver(runtime, session_id, token, reader)
            answer = await runtime.agent.process_direct(
                message, session_id, channel="cli", cancel_token=token, approver=approver
            )
        finally:
            await runtime.close()
    click.echo(answer)
    return 1 if answer.startswith("Error: ") else 0


async def run_interactive(settings: Settings, session_id: str) -> None:
    """A prompt loop; Ctrl-C during an answer cancels that turn, at the prompt it exits."""
    runtime = await open_runtime(settings)
    click.echo(f"CountBot ({settings.model.name}) — session {session_id}. Type 'exit' to leave.")
    reader = LineReader()
    try:
        while True:
            try:
                line = await reader.read("\nyou › ")
            except (EOFError, KeyboardInterrupt, asyncio.CancelledError):
                click.echo()
                return
            if line.strip().lower() in EXIT_WORDS:
                return
            if line.strip():
                await _one_turn(runtime, line, session_id, reader)
    finally:
        await runtime.close()


def _approver(
    runtime: Runtime, session_id: str, token: CancelToken, reader: LineReader | None
) -> Approver:
    """Questions of an in-process turn go to this terminal (or are denied without one)."""
    terminal = TerminalApprovals(runtime.approvals, reader)
    address = TurnAddress(session_id, "cli")
    return runtime.approvals.approver(address, cancelled=token.event, show=terminal.show)


async def _one_turn(runtime: Runtime, line: str, session_id: str, reader: LineReader) -> None:
    token = CancelToken()
    approver = _approver(runtime, session_id, token, reader)
    events = runtime.agent.process_message(
        line, session_id, channel="cli", cancel_token=token, approver=approver
    )
    turn = asyncio.create_task(_render(events))
    while not turn.done():
        try:
            await asyncio.shield(turn)
        except asyncio.CancelledError:
            # Ctrl-C arrives as a cancel of the main task under asyncio.run: stop the turn only.
            token.cancel("interrupted at the prompt")
            asyncio.current_task().uncancel()  # type: ignore[union-attr]


async def _render(events: AsyncIterator[AgentEvent]) -> None:
    sys.stdout.write("bot › ")
    async for event in events:
        _show(event)
    sys.stdout.write("\n")
    sys.stdout.flush()


def _show(event: AgentEvent) -> None:
    if isinstance(event, TextChunk):
        sys.stdout.write(event.content)
        sys.stdout.flush()
    elif isinstance(event, ToolStart):
        click.secho(f"\n  ⚙ {event.name} {event.arguments}", fg="bright_black", err=True)
    elif isinstance(event, ToolEnd):
        click.secho(f"  ↳ {event.status} ({event.duration_ms:.0f} ms)", fg="bright_black", err=True)
    elif isinstance(event, TurnError):
        click.secho(f"\nError: {event.error}", fg="red", err=True)
    elif isinstance(event, TurnCancelled):
        click.secho("\n(cancelled)", fg="yellow", err=True)
