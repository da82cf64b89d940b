"""Finding, starting and stopping the system Chromium, and reaping what a killed daemon left.

CountBot never downloads a browser: it runs the one the system has (Debian's `chromium`, on PATH,
or `tools.browser.executable`). The browser runs in its own process group, with the parent-death
signal set (util-linux `setpriv`) so a `kill -9` of the daemon takes it down too, and a reaper at
the next start kills whatever still runs on the profile and clears its stale lock files.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from countbot.browser.cdp import CdpConnection, CdpError

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
MISSING = (
    "Chromium is not installed: install Debian's `chromium` package (sudo apt install "
    "chromium) or set tools.browser.executable to a Chromium or Chrome binary. CountBot "
    "never downloads a browser."
)
# A start that takes longer than this is a broken browser, not a slow one.
_START_TIMEOUT = 30.0
_CLOSE_GRACE = 3.0
# Files Chromium keeps in a profile to refuse a second browser on it; stale after a kill.
_LOCKS = ("SingletonLock", "SingletonSocket", "SingletonCookie")
_FLAGS = (
    "--remote-debugging-pipe",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
    "--password-store=basic",
    "--mute-audio",
    "--disable-gpu",
    "--window-size=1280,900",
)


class BrowserUnavailable(Exception):
    """Chromium is missing or does not start; the message says what to do."""


def find_chromium(configured: str) -> Path | None:
    """The browser to run: the configured one, else the first candidate on PATH."""
    if configured:
        found = shutil.which(configured)
        return Path(found) if found else None
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return Path(found)
    return None


@dataclass(slots=True)
class Chromium:
    """A running browser: its process (a process group leader) and the CDP connection."""

    process: asyncio.subprocess.Process
    cdp: CdpConnection
    pid_file: Path

    async def stop(self) -> None:
        """Close it politely (cookies are written), then kill the whole group; no leftovers."""
        if self.process.returncode is None:
            with contextlib.suppress(CdpError, TimeoutError):
                async with asyncio.timeout(_CLOSE_GRACE):
                    await self.cdp.send("Browser.close")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_CLOSE_GRACE):
                    await self.process.wait()
        _kill_group(self.process.pid)
        if self.process.returncode is None:
            await self.process.wait()
        await self.cdp.close()
        with contextlib.suppress(FileNotFoundError):
            self.pid_file.unlink()


@dataclass(frozen=True, slots=True)
class LaunchPlan:
    """Where the browser keeps its data, and how it runs."""

    executable: Path
    profile: Path
    headless: bool
    log_file: Path
    pid_file: Path
    # A sandbox's command line the browser runs under (`jail.py`); empty: none.
    jail: tuple[str, ...] = ()


async def launch(plan: LaunchPlan) -> Chromium:
    """Start Chromium on `plan.profile` and return once it answers over the pipe."""
    await asyncio.to_thread(reap_leftovers, plan)
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()
    # Chromium reads fd 3 and writes fd 4; bash moves the pipe ends there, then execs (dash
    # cannot name descriptors above 9).
    move = (
        f"exec 3<&{to_browser_r} 4>&{from_browser_w} {to_browser_r}<&- {from_browser_w}>&-; "
        'exec "$@"'
    )
    argv = [
        shutil.which("bash") or "/bin/bash",
        "-c",
        move,
        "bash",
        *_death_signal(),
        *plan.jail,
        str(plan.executable),
        *_flags(plan),
    ]
    log = await asyncio.to_thread(plan.log_file.open, "wb")
    try:
        with log:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                pass_fds=(to_browser_r, from_browser_w),
                start_new_session=True,
            )
    except OSError as exc:
        for fd in (to_browser_r, to_browser_w, from_browser_r, from_browser_w):
            os.close(fd)
        raise BrowserUnavailable(f"could not start {plan.executable}: {exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            os.close(to_browser_r)
            os.close(from_browser_w)
    await asyncio.to_thread(plan.pid_file.write_text, str(process.pid))
    cdp = await CdpConnection.over_pipes(from_browser_r, to_browser_w)
    chromium = Chromium(process, cdp, plan.pid_file)
    try:
        async with asyncio.timeout(_START_TIMEOUT):
            await cdp.send("Browser.getVersion")
    except (CdpError, TimeoutError) as exc:
        await chromium.stop()
        tail = await asyncio.to_thread(_log_tail, plan.log_file)
        raise BrowserUnavailable(f"{plan.executable} did not start: {tail or exc}") from exc
    return chromium


def _flags(plan: LaunchPlan) -> list[str]:
    flags = [*_FLAGS, f"--user-data-dir={plan.profile}"]
    if plan.headless:
        flags.append("--headless")
    if os.geteuid() == 0 or plan.jail:  # as root, or inside bwrap, its own sandbox cannot run
        flags.append("--no-sandbox")
    return [*flags, "about:blank"]


def _death_signal() -> list[str]:
    """`setpriv --pdeathsig KILL`: the browser dies with the daemon, even on `kill -9`."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL"] if setpriv else []


def reap_leftovers(plan: LaunchPlan) -> int:
    """Kill every browser process still running on this profile (a daemon killed before it
    could stop its browser: the group in the pid file, and any process naming the profile),
    then remove the profile's stale locks; returns how many processes were killed."""
    marker = f"--user-data-dir={plan.profile}".encode()
    groups: set[int] = set()
    with contextlib.suppress(OSError, ValueError):
        groups.add(int(plan.pid_file.read_text().strip()))
    processes = list(_processes())
    groups.update(group for _, group, argv in processes if marker in argv)
    killed = 0
    for pid, group, argv in processes:
        # Only browser processes: a pid number reused by something else is left alone.
        if group in groups and argv and b"chrom" in argv[0]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
    with contextlib.suppress(FileNotFoundError):
        plan.pid_file.unlink()
    for name in _LOCKS:
        with contextlib.suppress(FileNotFoundError):
            (plan.profile / name).unlink()
    return killed


def _processes() -> Iterator[tuple[int, int, list[bytes]]]:
    """(pid, process group, arguments) of every process we may see."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: fields follow the last ")".
        fields = stat[stat.rindex(b")") + 2 :].split()
        yield int(entry.name), int(fields[2]), argv


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _log_tail(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in lines[-3:])[:600]
