"""The exec tool: runs one shell command in the workspace and returns its exit code and output.

The command runs inside the bubblewrap sandbox (`execution/sandbox.py`). When the sandbox is off or
does not work here, or the approval mode says so, the user is asked first (`approval_reason`
below, through the turn's `Approver`); nobody to ask means deny. The guard
(`execution/shell_guard.py`) is only a tripwire in front.

The command runs in its own process group with stdin closed. When it finishes, times out or is
cancelled, the whole group gets SIGTERM and, 2 s later, SIGKILL, so background jobs it started do
not outlive it. Environment variables whose names contain KEY, TOKEN, SECRET, PASSWORD, PASSWD or
CREDENTIAL, or whose values look like a secret to the masker, are not passed on: the model has no
business reading the daemon's credentials (inside the sandbox only an allow-list passes).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal

from countbot.common.masking import SecretMasker
from countbot.execution.sandbox import Sandbox
from countbot.execution.shell_guard import ShellGuard
from countbot.tools.approval import ApprovalRequest
from countbot.tools.base import Brings, Egress, Tool, ToolContext, ToolResult
from countbot.tools.schema import params, text
from countbot.tools.workspace_guard import PathRefused, WorkspaceGuard

_SECRET_ENV_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
_KILL_GRACE = 2.0
_POLL = 0.05
# A grandchild that left the process group may hold the output pipe open; stop reading then.
_DRAIN_GRACE = 2.0
_CHUNK = 65536


def command_env(masker: SecretMasker | None) -> dict[str, str]:
    """The daemon's environment minus anything that looks like a credential."""
    return {
        name: value
        for name, value in os.environ.items()
        if not any(word in name.upper() for word in _SECRET_ENV_WORDS)
        and not (masker is not None and masker.contains_secret(value))
    }


class _CappedOutput:
    """Keeps the first and the last half of the output once it exceeds the cap."""

    def __init__(self, limit: int) -> None:
        self._half = limit // 2
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0

    def feed(self, data: bytes) -> None:
        self._total += len(data)
        room = self._half - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            del self._tail[: -self._half]

    def text(self) -> str:
        head, tail = bytes(self._head), bytes(self._tail)
        if self._total == len(head) + len(tail):
            return _decode(head + tail)
        # Cut at line breaks so a secret is never split into a piece the masker cannot recognise.
        head = head[: head.rfind(b"\n") + 1] or head
        tail = tail[tail.find(b"\n") + 1 :] or tail
        omitted = self._total - len(head) - len(tail)
        return f"{_decode(head)}\n… [{omitted:,} bytes omitted] …\n{_decode(tail)}"


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to the group; False when no process is left in it."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def _stop_group(process: asyncio.subprocess.Process) -> None:
    """SIGTERM to everything in the command's group, SIGKILL to whatever is left after 2 s.

    An orphaned job's zombie counts as left until init reaps it; under an init that never reaps
    (some containers) that costs the full grace period, nothing worse.
    """
    if _signal_group(process.pid, signal.SIGTERM):
        for _ in range(round(_KILL_GRACE / _POLL)):
            await asyncio.sleep(_POLL)
            if process.returncode is not None and not _signal_group(process.pid, 0):
                break
        else:
            _signal_group(process.pid, signal.SIGKILL)
    await process.wait()


async def _drain(pipe: BinaryIO, output: _CappedOutput) -> None:
    stream = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), pipe)
    try:
        while chunk := await stream.read(_CHUNK):
            output.feed(chunk)
    finally:
        transport.close()


ApprovalMode = Literal["auto", "on-miss", "always"]


@dataclass(frozen=True, slots=True)
class ExecPolicy:
    """When exec asks the user first (tools.exec.approval) and how long it waits for an answer."""

    approval: ApprovalMode = "auto"
    approval_timeout: float = 120.0


def approval_reason(mode: ApprovalMode, *, sandboxed: bool, allow_listed: bool) -> str | None:
    """Why a command needs the user's yes, or None when it may run without asking.

    Leaving the sandbox always asks, whatever the mode: that is the fail-closed rule.
    """
    if not sandboxed:
        return "it would run outside the sandbox, with full access to this machine"
    if mode == "always":
        return "tools.exec.approval is 'always'"
    if mode == "on-miss" and not allow_listed:
        return "it is not in tools.exec.allow_patterns"
    return None


# A command that plainly reaches the network: a URL, or a common network client as a word.
_FETCHES = re.compile(
    r"://|(?<![\w.-])(?:curl|wget|nc|ncat|netcat|socat|ssh|scp|sftp|rsync|ftp|telnet|git|http|"
    r"https|aria2c|lynx|w3m)(?![\w.-])"
)


class ExecTool(Tool):
    """Runs shell commands that pass the ShellGuard, in the sandbox, asking when it must."""

    name = "exec"
    description = (
        "Run a shell command (bash -c) in the workspace and return its exit code and combined "
        "stdout/stderr. stdin is closed, so interactive commands fail; long output keeps its "
        "beginning and end. It runs in a sandbox: only the workspace is writable, /tmp is "
        "private, credentials are hidden. Dangerous commands (sudo, rm -rf /, ...) are refused."
    )
    parameters = params(
        required={"command": text("The shell command.", minLength=1)},
        optional={
            "working_dir": text("Directory to run in, relative to the workspace (default: it).")
        },
    )

    def __init__(
        self,
        guard: ShellGuard,
        workspace_guard: WorkspaceGuard,
        sandbox: Sandbox,
        *,
        timeout: float = 60.0,
        max_output: int = 30_000,
        masker: SecretMasker | None = None,
        policy: ExecPolicy = ExecPolicy(),
    ) -> None:
        self._guard = guard
        self._workspace_guard = workspace_guard
        self._sandbox = sandbox
        self._policy = policy
        self._command_timeout = timeout
        self._max_output = max_output
        self._masker = masker
        self._shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
        # The registry's deadline leaves room for the user's answer and for our own timeout to
        # stop the group cleanly.
        self.timeout = policy.approval_timeout + timeout + _KILL_GRACE + _DRAIN_GRACE + 1.0

    brings = frozenset({"private"})

    async def brought(self, args: dict[str, Any]) -> Brings:
        """The workspace's files; and a stranger's text when the command plainly fetches some (a
        URL or a network client in it). A script that fetches on its own is not seen here."""
        command = str(args.get("command", ""))
        if self._sandbox.has_network and _FETCHES.search(command):
            return frozenset({"private", "untrusted"})
        return self.brings

    async def egress(self, args: dict[str, Any], ctx: ToolContext) -> Egress | None:
        """With network a command can send anything anywhere: the command is all we can show.

        Outside the sandbox every command asks anyway (`approval_reason`): one question is enough.
        """
        if not self._sandbox.has_network or not self._sandbox.status.active:
            return None
        return Egress("exec", "network", str(args.get("command", "")), opaque=True)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = args["command"]
        # The guard is pure CPU work on model-written text: never on the event loop.
        verdict = await asyncio.to_thread(self._guard.inspect, command)
        if verdict.refusal is not None:
            return ToolResult.error(f"command refused: {verdict.refusal}")
        status = self._sandbox.status
        if status.mode == "bwrap" and not status.active:
            return ToolResult.error(f"the sandbox is required but unavailable: {status.detail}")
        denial = await self._approve(command, ctx, verdict.allow_listed)
        if denial is not None:
            return ToolResult.error(denial)
        try:
            cwd = await asyncio.to_thread(self._working_dir, args.get("working_dir"))
        except PathRefused as exc:
            return ToolResult.error(exc.reason)
        if status.active:
            argv, env = await self._sandbox.command(self._shell, command, cwd)
        else:
            argv, env = [self._shell, "-c", command], command_env(self._masker)
        # Our own pipe rather than asyncio's: `Process.wait()` would also wait for every
        # background job that inherited the pipe to close it.
        read_fd, write_fd = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            os.close(read_fd)
            return ToolResult.error(f"could not start the command: {exc.strerror or exc}")
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        return await self._supervise(process, os.fdopen(read_fd, "rb", buffering=0), ctx)

    async def _approve(self, command: str, ctx: ToolContext, allow_listed: bool) -> str | None:
        """None when the command may run, else why not (the user said no, or nobody could)."""
        reason = approval_reason(
            self._policy.approval, sandboxed=self._sandbox.status.active, allow_listed=allow_listed
        )
        if reason is None:
            return None
        needs = f"not run: this command needs the user's approval ({reason})"
        advice = "Do not retry it unchanged; tell the user what you wanted to run and why."
        if ctx.approver is None:
            return f"{needs} and nobody can give it here. {advice}"
        request = ApprovalRequest(tool="exec", summary=command, reason=reason, key=command)
        try:
            # The approver answers "deny" on its own timeout; this bound is only the backstop.
            decision = await asyncio.wait_for(
                ctx.approver(request), self._policy.approval_timeout + 1.0
            )
        except TimeoutError:
            decision = "deny"
        if decision == "deny":
            return (
                f"{needs} and the user did not approve it (they denied it, did not answer in "
                f"time, or nobody can answer in this turn, as in a scheduled run). {advice}"
            )
        return None

    def _working_dir(self, user_path: str | None) -> Path:
        if user_path is None:
            return self._workspace_guard.workspace
        path = self._workspace_guard.resolve(user_path)
        if not path.is_dir():
            raise PathRefused(f"working_dir {user_path!r} is not an existing directory")
        return path

    async def _supervise(
        self, process: asyncio.subprocess.Process, pipe: BinaryIO, ctx: ToolContext
    ) -> ToolResult:
        """Wait for exit, timeout or cancel; in every case (task cancelled too) stop the group."""
        output = _CappedOutput(self._max_output)
        reader = asyncio.create_task(_drain(pipe, output))
        exited = asyncio.create_task(process.wait())
        cancelled = asyncio.create_task(ctx.cancelled.wait())
        try:
            done, _ = await asyncio.wait(
                {exited, cancelled},
                timeout=self._command_timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            exited.cancel()
            cancelled.cancel()
            await _stop_group(process)
            await asyncio.wait({reader}, timeout=_DRAIN_GRACE)
            reader.cancel()
        text = output.text() or "(no output)"
        if exited in done:
            return ToolResult(f"exit code {process.returncode}\n{text}")
        if cancelled in done:
            return ToolResult(f"Cancelled: the command was stopped.\n{text}", "cancelled")
        return ToolResult(
            f"Error: the command timed out after {self._command_timeout:g} s and was stopped.\n"
            f"{text}",
            "timeout",
        )
