"""`countbot doctor`: checks a user can act on, each printed as one line with ✓, ! or ✗.

! is a warning: CountBot works, but less safely than it could (the exec sandbox is off).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import click

from countbot.browser.chromium import MISSING, find_chromium
from countbot.browser.jail import jail_argv
from countbot.config.agent_view import agent_settings
from countbot.config.settings import MAIN, Binding, Settings, ToolsSettings
from countbot.execution.sandbox import SandboxStatus
from countbot.local_model.catalogue import CATALOGUE
from countbot.local_model.models import effective_model
from countbot.local_model.pull import sha256_of
from countbot.runtime.assembly import Runtime, open_house, open_runtime
from countbot.runtime.capabilities import CAPABILITY_NAMES, capabilities
from countbot.runtime.model_probe import ProbeFailed, ask_ok, probe_settings
from countbot.runtime.models import SettingsModelResolver
from countbot.triggers.dispatcher import ALARM_AFTER
from countbot.triggers.events import TriggerEvents
from countbot.web.instance import read_daemon_info

Check = Callable[[], Awaitable[str]]
# Seconds each MCP server gets to connect (a first `npx`/`uvx` start downloads the server).
MCP_WAIT = 60.0


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

    def with_store(check: Callable[[Runtime], Awaitable[str]]) -> Check:
        """`check` of the opened runtime; skipped (failed) when the store did not open."""

        async def run() -> str:
            if runtime is None:
                raise CheckFailed("skipped: the store did not open")
            return await check(runtime)

        return run

    checks: list[tuple[str, Check]] = [
        ("workspace", lambda: _writable(settings.workspace)),
        ("store", open_store),
        ("sandbox", with_store(_sandbox_check)),
        ("skills", with_store(_skills_line)),
        ("mcp", with_store(_mcp_line)),
        ("browser", lambda: _browser_line(settings.tools)),
        ("triggers", with_store(_triggers_line)),
        ("agents", with_store(_agents_lines)),
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
        await _print_capabilities(runtime)
        await runtime.close()
    return 1 if failures else 0


async def _skills_line(runtime: Runtime) -> str:
    catalog = await runtime.skills.catalog()
    missing = [
        f"{s.name} (needs {', '.join(s.missing)})" for s in catalog.skills if not s.available
    ]
    note = f"; unavailable: {'; '.join(missing)}" if missing else ""
    return f"{len(catalog.skills)} skills{note}"


async def _sandbox_check(runtime: Runtime) -> str:
    return _sandbox_line(runtime.sandbox.status)


async def _print_capabilities(runtime: Runtime) -> None:
    """The list the first page shows; what is off is a choice, not a failure."""
    found = await asyncio.to_thread(capabilities, runtime.settings, runtime.sandbox.status)
    click.echo("capabilities (as the first page shows them):")
    for capability in found:
        mark, lead = ("✓", "") if capability.on else ("!", "to turn on: ")
        hint = f"; {lead}{capability.hint}" if capability.hint else ""
        click.echo(f"  {mark} {CAPABILITY_NAMES[capability.key]}: {capability.detail}{hint}")


async def _agents_lines(runtime: Runtime) -> str:
    """Each agent: switched off, or its house opened (as the daemon opens it) or why not; and
    the bindings that route messages to it. A house that does not open fails the check."""
    settings = runtime.settings
    agents = settings.agents
    lines, failed = [], []
    for name in agents.names():
        state = "switched off"
        if agents.enabled(name):
            state = "on"
            if name != MAIN:
                try:
                    house = await open_house(runtime, agent_settings(settings, name), name)
                except Exception as exc:  # what the daemon would log: said here instead
                    failed.append(name)
                    state = f"fails to start: {exc or type(exc).__name__}"
                else:
                    state = f"on, house opens ({house.settings.workspace})"
                    await house.close()
        bound = [_binding_text(b) for b in agents.bindings if b.agent == name]
        if agents.default == name:
            bound.append("every unbound message")
        lines.append(f"  {name}: {state}; bound to: {', '.join(bound) or 'nothing'}")
    if not agents.default:
        lines.append("  (unbound messages are refused)")
    head = f"{len(agents.names())} agent(s)" if not failed else f"{', '.join(failed)} cannot start"
    text = "\n".join([head, *lines])
    if failed:
        raise CheckFailed(text)
    return text


def _binding_text(binding: Binding) -> str:
    fields = ("channel", "account", "chat", "sender")
    return " ".join(f"{key} {getattr(binding, key)}" for key in fields if getattr(binding, key))


async def _triggers_line(runtime: Runtime) -> str:
    """Events waiting over a minute are an alarm while the daemon runs (it should have started
    them); with the daemon down they simply wait for its next start."""
    settings = runtime.settings
    configured = settings.triggers
    count = len(configured.hooks) + len(configured.folders) + len(configured.mailboxes)
    waiting = await TriggerEvents(runtime.db).waiting_since(time.time() - ALARM_AFTER)
    if not waiting:
        return f"{count} configured; no event waiting"
    names = ", ".join(sorted({event.trigger for event in waiting}))
    if read_daemon_info(settings.data_dir) is not None:
        raise CheckWarning(
            f"{len(waiting)} event(s) of {names} received over a minute ago and not started "
            "while the daemon runs: see its log and the events in /api/triggers/events"
        )
    return f"{count} configured; {len(waiting)} event(s) of {names} run at the daemon's next start"


async def _mcp_line(runtime: Runtime) -> str:
    """Every enabled MCP server connects (each gets up to MCP_WAIT seconds)."""
    connections = runtime.mcp.connections
    if not connections:
        return "no MCP servers enabled"
    await asyncio.gather(*(c.wait_tried(MCP_WAIT) for c in connections.values()))
    rows = runtime.mcp.status()
    broken = [
        f"{r['name']} ({r['last_error'] or r['state']})"
        for r in rows
        if r["enabled"] and r["state"] != "ready"
    ]
    if broken:
        raise CheckFailed(f"not connected: {'; '.join(broken)}; see `countbot mcp test NAME`")
    tools = sum(len(r["tools"]) for r in rows)
    return f"{len(connections)} servers connected, {tools} tools"


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


async def _browser_line(tools: ToolsSettings) -> str:
    """The Chromium the `browser` tool would start, its version and whether it runs in bwrap;
    missing is a warning (the rest of CountBot works; nothing is downloaded in its place)."""
    settings = tools.browser
    if not settings.enabled:
        return "off (tools.browser.enabled: false)"
    executable = find_chromium(settings.executable)
    if executable is None:
        raise CheckWarning(MISSING)
    process = await asyncio.create_subprocess_exec(
        str(executable),
        "--version",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        async with asyncio.timeout(30):
            out, _ = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        raise CheckFailed(f"{executable} --version did not answer; is it a browser?") from None
    version = out.decode(errors="replace").strip() or f"exit status {process.returncode}"
    where = (
        "in the bwrap sandbox" if jail_argv(tools.exec.sandbox, Path("/"), ()) else "unsandboxed"
    )
    return f"{executable} ({version}), {where}, started at the browser tool's first use"


async def _writable(folder: Path) -> str:
    def probe() -> None:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise CheckFailed(f"{folder} is not writable")

    await asyncio.to_thread(probe)
    return str(folder)


async def _model_answers(settings: Settings) -> str:
    name = effective_model(settings.model, settings.data_dir)
    if not name:
        raise CheckFailed("no model configured: set model.name in the config file")
    probe = probe_settings(settings.model)
    resolver = SettingsModelResolver(lambda: probe, settings.data_dir)
    try:
        try:
            answer = await ask_ok(resolver, name)
        except ProbeFailed as exc:
            raise CheckFailed(str(exc)) from None
        answered = (
            f"{name} answered: {answer.done.message.text.strip()[:40]!r}; "
            f"context window {answer.choice.context_window:,} tokens{_window_source(settings)}"
        )
        if resolver.local.server is None:
            return answered
        speed = _speed(answer.done.usage.completion_tokens, answer.first, answer.total)
        file = await asyncio.to_thread(_file_line, resolver.local.server.options.model)
        return f"{answered}; {file}; {speed}"
    finally:
        await resolver.aclose()  # stops a local model's child server


def _file_line(path: Path) -> str:
    """The local model's file and whether its SHA-256 is the catalogue's (hashed in full)."""
    digest = sha256_of(path)
    entry = next((m for m in CATALOGUE if m.file == path.name), None)
    if entry is None:
        verdict = "not in the catalogue"
    elif digest == entry.sha256:
        verdict = "matches the catalogue"
    else:
        raise CheckFailed(f"{path}: SHA-256 {digest} is not the catalogue's; pull it again")
    return f"file {path} ({path.stat().st_size / 1e6:.0f} MB, sha256 {digest[:16]}... {verdict})"


def _speed(tokens: int, first: float | None, total: float) -> str:
    """A short generation's speed: time to the first token and tokens per second after it."""
    if first is None or tokens < 2 or total <= first:
        return f"{tokens} tokens in {total:.1f} s"
    return f"first token after {first:.2f} s, then {(tokens - 1) / (total - first):.1f} tokens/s"


def _window_source(settings: Settings) -> str:
    """Where the window came from: the override, or the model map (smallest of any fallbacks)."""
    if settings.model.context_window:
        return " (model.context_window)"
    return " (model map" + (", smallest with the fallbacks)" if settings.model.fallbacks else ")")
