"""`countbot chat`: one message (`-m`) or an interactive prompt with streaming output."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import AsyncIterator, Callable

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
from countbot.agent.loop import AgentLoop
from countbot.cli.daemon_client import answer_via_daemon
from countbot.config.settings import Settings
from countbot.runtime.assembly import open_runtime

EXIT_WORDS = {"exit", "quit", "/exit", "/quit", ":q"}


async def run_once(
    settings: Settings, message: str, session_id: str, local: Callable[[], Settings]
) -> int:
    """Run one turn (through the running daemon if there is one) and print it; exit 1 on error.

    `settings` may hold unresolved secrets; `local()` loads the complete ones when no daemon runs.
    """
    answer = await answer_via_daemon(settings, message, session_id)
    if answer is None:
        runtime = await open_runtime(local())
        try:
            answer = await runtime.agent.process_direct(message, session_id, channel="cli")
        finally:
            await runtime.close()
    click.echo(answer)
    return 1 if answer.startswith("Error: ") else 0


async def run_interactive(settings: Settings, session_id: str) -> None:
    """A prompt loop; Ctrl-C during an answer cancels that turn, at the prompt it exits."""
    runtime = await open_runtime(settings)
    click.echo(f"CountBot ({settings.model.name}) — session {session_id}. Type 'exit' to leave.")
    try:
        while True:
            try:
                line = await _read_line("\nyou › ")
            except (EOFError, KeyboardInterrupt, asyncio.CancelledError):
                click.echo()
                return
            if line.strip().lower() in EXIT_WORDS:
                return
            if line.strip():
                await _one_turn(runtime.agent, line, session_id)
    finally:
        await runtime.close()


async def _read_line(prompt: str) -> str:
    """`input()` in a daemon thread: Ctrl-C at the prompt must not wait for Enter to exit.

    `asyncio.to_thread` would leave a worker that `asyncio.run` joins on shutdown, blocking in
    `input()` until the user pressed Enter.
    """
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
    return await future


def _settle(future: asyncio.Future[str], line: str | None, exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(line or "")


async def _one_turn(agent: AgentLoop, line: str, session_id: str) -> None:
    token = CancelToken()
    turn = asyncio.create_task(
        _render(agent.process_message(line, session_id, channel="cli", cancel_token=token))
    )
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
