"""`countbot chat`: one message (`-m`) or an interactive prompt with streaming output."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

import click

from countbot.agent.cancel import CancelToken
from countbot.agent.events import (
    AgentEvent,
    TextChunk,
    ToolEnd,
    ToolStart,
    TurnCancelled,
    TurnDone,
    TurnError,
    TurnNotice,
)
from countbot.agent.notices import CANCELLED, final_text
from countbot.agent.turn_request import TurnRequest
from countbot.cli.approval_prompt import LineReader, TerminalApprovals, terminal_reader
from countbot.cli.daemon_client import DaemonChat, final_answer
from countbot.config.agent_view import agent_settings
from countbot.config.settings import MAIN, Settings
from countbot.runtime.approvals import TurnAddress
from countbot.runtime.assembly import Runtime, open_runtime
from countbot.tools.approval import Approver

EXIT_WORDS = {"exit", "quit", "/exit", "/quit", ":q"}
T = TypeVar("T")

# Typed at the prompt: the last message again (what an answer without text offers).
RETRY = "/retry"


@dataclass(frozen=True, slots=True)
class Talk:
    """Whom a chat talks to: the session, and the agent named with `--agent` (None: the
    session's own through the daemon, `main` in process)."""

    session_id: str
    agent: str | None = None


async def run_once(
    settings: Settings, message: str, talk: Talk, local: Callable[[], Settings]
) -> int:
    """Run one turn (through the running daemon if there is one) and print it; exit 1 on error,
    130 when Ctrl-C cancelled it (in the daemon too: the turn stops there and is stored so).

    On a terminal the answer streams as it comes, with tool calls and notices beside it as at
    the prompt; into a pipe or file only the final text is written, once. `settings` may hold
    unresolved secrets; `local()` gives the complete ones when no daemon runs
    (`one_turn_settings`). Questions are asked at the terminal when stdin is one, else denied.
    """
    reader = terminal_reader(LineReader())
    streamed = sys.stdout.isatty()
    daemon = await DaemonChat.open(settings, reader)
    if daemon is not None:
        # Ctrl-C cancels the daemon's turn as at the prompt (else the daemon would finish it).
        async with daemon:
            consume = _streaming(final_answer) if streamed else final_answer
            answer = await _one_turn(_DaemonTurns(daemon, talk), message, consume)
    else:
        runtime = await _open_house(local(), talk, prepare_model=True)
        try:
            turns = _LocalTurns(runtime, talk.session_id, reader)
            consume = _streaming(final_text) if streamed else final_text
            answer = await _one_turn(turns, message, consume)
        finally:
            await runtime.close()
    if not streamed:
        click.echo(answer)
    if answer == CANCELLED:
        return 130  # what an interrupted command exits with
    return 1 if answer.startswith("Error: ") else 0


async def run_interactive(settings: Settings, talk: Talk) -> None:
    """A prompt loop, through the running daemon if there is one (same sessions, no second
    runtime), else in-process. Ctrl-C during an answer cancels that turn, at the prompt it exits.
    """
    reader = LineReader()
    daemon = await DaemonChat.open(settings, reader)
    if daemon is not None:
        async with daemon:
            where = "through the running daemon"
            turns = _DaemonTurns(daemon, talk)
            await _prompt_loop(settings, talk.session_id, where, turns, reader)
        return
    runtime = await _open_house(settings, talk)
    try:
        turns = _LocalTurns(runtime, talk.session_id, reader)
        await _prompt_loop(runtime.settings, talk.session_id, "", turns, reader)
    finally:
        await runtime.close()


async def _open_house(settings: Settings, talk: Talk, *, prepare_model: bool = False) -> Runtime:
    """The agent's runtime in this process (its own house: `config/agent_view.py`), its session
    claimed for it; a session of another agent is refused (its turns would read that agent's
    conversation)."""
    agent = talk.agent or MAIN
    runtime = await open_runtime(
        agent_settings(settings, agent), prepare_model=prepare_model, name=agent
    )
    info = await runtime.sessions.ensure(talk.session_id, channel="cli", agent=agent)
    if info.agent != agent:
        await runtime.close()
        raise click.ClickException(
            f"session {talk.session_id!r} belongs to the assistant {info.agent!r}; "
            f"use --agent {info.agent} or another --session"
        )
    return runtime


class _Turns(Protocol):
    """Where the prompt's turns run: started per line, cancelled by Ctrl-C."""

    def start(self, line: str) -> AsyncIterator[AgentEvent]: ...

    async def cancel(self) -> None: ...


class _LocalTurns:
    """Turns run by this process's agent loop; their questions are asked at this terminal."""

    def __init__(self, runtime: Runtime, session_id: str, reader: LineReader) -> None:
        self._runtime = runtime
        self._session_id = session_id
        self._reader = reader
        self._token = CancelToken()

    def start(self, line: str) -> AsyncIterator[AgentEvent]:
        self._token = CancelToken()
        approver = _approver(self._runtime, self._session_id, self._token, self._reader)
        request = TurnRequest(
            line,
            self._session_id,
            channel="cli",
            cancel_token=self._token,
            approver=approver,
            agent=self._runtime.name,
        )
        return self._runtime.agent.process_message(request)

    async def cancel(self) -> None:
        self._token.cancel("interrupted at the prompt")


class _DaemonTurns:
    """Turns run by the daemon, sent and cancelled over its WebSocket."""

    def __init__(self, daemon: DaemonChat, talk: Talk) -> None:
        self._daemon = daemon
        self._talk = talk

    def start(self, line: str) -> AsyncIterator[AgentEvent]:
        return self._daemon.turn(self._talk.session_id, line, agent=self._talk.agent)

    async def cancel(self) -> None:
        await self._daemon.cancel(self._talk.session_id)


def _approver(
    runtime: Runtime, session_id: str, token: CancelToken, reader: LineReader | None
) -> Approver:
    """Questions of an in-process turn go to this terminal (or are denied without one)."""
    terminal = TerminalApprovals(runtime.approvals, reader)
    address = TurnAddress(session_id, "cli", agent=runtime.name)
    return runtime.approvals.approver(address, cancelled=token.event, show=terminal.show)


async def _prompt_loop(
    settings: Settings, session_id: str, where: str, turns: _Turns, reader: LineReader
) -> None:
    suffix = f" {where}" if where else ""
    click.echo(
        f"CountBot ({settings.model.name}) — session {session_id}{suffix}. Type 'exit' to leave."
    )
    asked = ""
    while True:
        try:
            line = await reader.read("\nyou › ")
        except (EOFError, KeyboardInterrupt, asyncio.CancelledError):
            click.echo()
            return
        if line.strip().lower() in EXIT_WORDS:
            return
        if line.strip().lower() == RETRY and asked:  # offered after an answer without text
            line = asked
        if line.strip():
            asked = line
            await _one_turn(turns, line, _render)


async def _one_turn(
    turns: _Turns,
    line: str,
    consume: Callable[[AsyncIterator[AgentEvent]], Awaitable[T]],
) -> T:
    """Run one turn to its end, its events handed to `consume`; Ctrl-C cancels the turn (and
    waits for it to end as cancelled), never only this process's view of it."""
    turn = asyncio.create_task(consume(turns.start(line)))
    while not turn.done():
        try:
            await asyncio.shield(turn)
        except asyncio.CancelledError:
            # Ctrl-C arrives as a cancel of the main task under asyncio.run: stop the turn only.
            await turns.cancel()
            asyncio.current_task().uncancel()  # type: ignore[union-attr]
    return turn.result()


def _streaming(
    summarize: Callable[[AsyncIterator[AgentEvent]], Awaitable[str]],
) -> Callable[[AsyncIterator[AgentEvent]], Awaitable[str]]:
    """A consumer that shows a turn as it happens (as `_render`, without the prompt's prefix)
    and gives its final text as `summarize` reads it."""

    async def consume(events: AsyncIterator[AgentEvent]) -> str:
        async def shown() -> AsyncIterator[AgentEvent]:
            async for event in events:
                _show(event)
                yield event

        answer = await summarize(shown())
        sys.stdout.write("\n")
        sys.stdout.flush()
        return answer

    return consume


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
    elif isinstance(event, TurnNotice):
        offer = f" (or type {RETRY})" if event.details.get("retry") else ""
        click.secho(f"\n  ℹ {event.text}{offer}", fg="yellow", err=True)
    elif isinstance(event, TurnDone) and event.model:
        click.secho(f"\n  — {event.model}", fg="bright_black", err=True)
    elif isinstance(event, TurnError):
        click.secho(f"\nError: {event.error}", fg="red", err=True)
    elif isinstance(event, TurnCancelled):
        click.secho("\n(cancelled)", fg="yellow", err=True)
