"""`countbot doctor`: checks a user can act on, each printed as one line with ✓, ! or ✗.

! is a warning: CountBot works, but less safely than it could (the exec sandbox is off).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import click

from countbot.config.settings import Settings
from countbot.llm.types import ChatRequest, StreamDone, StreamError, TextPart, UserMessage
from countbot.runtime.assembly import Runtime, open_runtime
from countbot.runtime.models import ModelResolver
from countbot.tools.sandbox import SandboxStatus

Check = Callable[[], Awaitable[str]]


class CheckFailed(Exception):
    """A failed check; its message says what to do."""


class CheckWarning(Exception):
    """A check that passes with a caveat; its message says what to change."""


async def run_checks(settings: Settings) -> int:
    """Run every check; exit status 0 when all pass, 1 otherwise."""
    click.echo(f"config: {settings.config_path or '(defaults, no config file)'}")
    runtime: Runtime | None = None
    failures = 0

    async def open_store() -> str:
        nonlocal runtime
        runtime = await open_runtime(settings)
        return f"data folder {settings.data_dir} (SQLite store opens)"

    async def skills() -> str:
        if runtime is None:
            raise CheckFailed("skipped: the store did not open")
        catalog = await runtime.skills.catalog()
        missing = [
            f"{s.name} (needs {', '.join(s.missing)})" for s in catalog.skills if not s.available
        ]
        note = f"; unavailable: {'; '.join(missing)}" if missing else ""
        return f"{len(catalog.skills)} skills{note}"

    async def sandbox() -> str:
        if runtime is None:
            raise CheckFailed("skipped: the store did not open")
        return _sandbox_line(runtime.sandbox.status)

    checks: list[tuple[str, Check]] = [
        ("workspace", lambda: _writable(settings.workspace)),
        ("store", open_store),
        ("sandbox", sandbox),
        ("skills", skills),
        ("model", lambda: _model_answers(settings)),
    ]
    for name, check in checks:
        try:
            detail = await check()
            click.echo(f"✓ {name}: {detail}")
        except CheckWarning as exc:
            click.echo(f"! {name}: {exc}")
        except (CheckFailed, OSError) as exc:
            failures += 1
            click.echo(f"✗ {name}: {exc}")
    if runtime is not None:
        await runtime.close()
    return 1 if failures else 0


def _sandbox_line(status: SandboxStatus) -> str:
    """Active is fine; off, or unavailable in auto mode, warns; a required one missing fails."""
    if status.active:
        return f"exec runs in the sandbox ({status.detail})"
    if status.mode == "bwrap":
        raise CheckFailed(f"{status.detail}; install bubblewrap (apt-get install bubblewrap)")
    hint = (
        "set tools.exec.sandbox: auto"
        if status.mode == "off"
        else "install bubblewrap (apt-get install bubblewrap)"
    )
    raise CheckWarning(f"exec is NOT sandboxed: {status.detail}; {hint}")


async def _writable(folder: Path) -> str:
    def probe() -> None:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise CheckFailed(f"{folder} is not writable")

    await asyncio.to_thread(probe)
    return str(folder)


async def _model_answers(settings: Settings) -> str:
    if not settings.model.name:
        raise CheckFailed("no model configured: set model.name in the config file")
    choice = await ModelResolver(lambda: settings.model, settings.data_dir)()
    request = ChatRequest(
        (UserMessage((TextPart("Reply with the single word OK."),)),), max_tokens=16
    )
    async for event in choice.provider.stream(request):
        if isinstance(event, StreamDone):
            return f"{settings.model.name} answered: {event.message.text.strip()[:40]!r}"
        if isinstance(event, StreamError):
            raise CheckFailed(f"{settings.model.name} failed: {event.message}")
    raise CheckFailed(f"{settings.model.name} gave no answer")
