"""The exec sandbox with real bubblewrap: limits end runaway commands, network off, fallbacks.

Runaway commands are written to a script file first: the guard would refuse them typed inline,
and what is tested here is the containment behind it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from countbot.execution.sandbox import SandboxLimits
from countbot.execution.shell import ExecPolicy
from countbot.tools.base import ToolContext, ToolResult
from tests.execution.exec_support import RecordingApprover, make_exec, probed_sandbox

PYTHON = sys.executable


def host_processes_with(marker: str) -> list[int]:
    """Host pids whose command line contains `marker` (the sandbox's own pids differ)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                status = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker in cmdline and status != "Z":
                found.append(int(entry.name))
    return found


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A folder outside /tmp, which the sandbox's private /tmp would hide for the wrong reason."""
    folder = Path(tempfile.mkdtemp(prefix="countbot-sandbox-", dir="/var/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


async def test_hidden_files_inside_and_around_the_workspace_stay_hidden(outside_tmp: Path) -> None:
    # data_dir holds the workspace by default: the cover must not hide the workspace itself.
    data = outside_tmp / "data"
    workspace = data / "workspace"
    workspace.mkdir(parents=True)
    (data / "countbot.db").write_text("db-canary")
    (workspace / "config.yaml").write_text("config-canary")
    (workspace / "notes.md").write_text("visible notes")
    sandbox = probed_sandbox("bwrap", workspace, hidden=[data, workspace / "config.yaml"])
    command = f"cat notes.md {data}/countbot.db config.yaml 2>&1; ls {data}"
    result = await make_exec(workspace, sandbox=sandbox).execute(
        {"command": command}, ToolContext("s1", workspace)
    )
    assert "visible notes" in result.content and "workspace" in result.content
    assert "db-canary" not in result.content and "config-canary" not in result.content


async def run_script(
    workspace: Path, script: str, limits: SandboxLimits, exec_timeout: float
) -> ToolResult:
    """Run `script` (written to a file: the guard would refuse it typed inline) under `limits`."""
    (workspace / "script.sh").write_text(script)
    sandbox = probed_sandbox("bwrap", workspace, limits=limits)
    tool = make_exec(workspace, sandbox=sandbox, timeout=exec_timeout)
    command = "bash script.sh 2>&1 | head -c 2000; echo status ${PIPESTATUS[0]}"
    return await tool.execute({"command": command}, ToolContext("s1", workspace))


async def test_a_fork_bomb_hits_the_process_limit_and_ends_with_the_command(
    workspace: Path, ctx: ToolContext
) -> None:
    # The script must outlive the timeout: while the bomb holds every process slot, a plain
    # `sleep 30` could fail to fork and end the script at once (seen on a loaded machine).
    bomb = "b() { b | b & }\nb\nuntil sleep 30; do :; done\n"
    result = await run_script(workspace, bomb, SandboxLimits(processes=40), exec_timeout=3)
    assert result.status == "timeout"
    assert "Resource temporarily unavailable" in result.content
    after = await make_exec(workspace).execute({"command": "echo still fine"}, ctx)
    assert after.content == "exit code 0\nstill fine\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="the pids cgroup is root's fork-bomb guard")
async def test_as_root_the_whole_command_runs_in_the_pids_cgroup(workspace: Path) -> None:
    sandbox = probed_sandbox("bwrap", workspace, limits=SandboxLimits(processes=40))
    if "no pids cgroup" in sandbox.status.detail:
        pytest.skip("this machine lets no pids cgroup be made")
    # The shell itself, and a process it starts.
    command = "grep -h countbot-exec /proc/self/cgroup; (grep -h countbot-exec /proc/self/cgroup)"
    result = await make_exec(workspace, sandbox=sandbox).execute(
        {"command": command}, ToolContext("s1", workspace)
    )
    lines = result.content.splitlines()[1:]
    assert len(lines) == 2 and all(line.endswith("-40") for line in lines), result.content


async def test_a_memory_hog_fails_at_the_memory_limit(workspace: Path) -> None:
    hog = f"{PYTHON} -c 'x = bytearray(2 << 30)'\n"
    result = await run_script(
        workspace, hog, SandboxLimits(memory_bytes=512 << 20), exec_timeout=30
    )
    assert "MemoryError" in result.content and "status 1\n" in result.content


async def test_a_cpu_loop_is_stopped_by_the_cpu_time_limit(workspace: Path) -> None:
    spin = "while :; do :; done\n"
    result = await run_script(workspace, spin, SandboxLimits(cpu_seconds=1), exec_timeout=30)
    # Killed at the CPU limit (SIGXCPU, or SIGKILL at the hard limit) long before the timeout.
    assert result.status == "ok"
    assert "status 152" in result.content or "status 137" in result.content


async def test_background_jobs_in_the_sandbox_do_not_outlive_the_command(
    workspace: Path, ctx: ToolContext
) -> None:
    tool = make_exec(workspace, timeout=1)
    finished = await tool.execute({"command": "sleep 301.5 & echo started"}, ctx)
    timed_out = await tool.execute({"command": "sleep 302.5 & sleep 303.5"}, ctx)
    assert finished.content == "exit code 0\nstarted\n" and timed_out.status == "timeout"
    for _ in range(50):
        if not host_processes_with("sleep 30"):
            break
        await asyncio.sleep(0.05)
    assert host_processes_with("sleep 301.5") == host_processes_with("sleep 303.5") == []


@pytest.fixture
async def loopback_port() -> AsyncIterator[int]:
    async def greet(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(greet, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1]


@pytest.mark.parametrize(("network", "expected"), [(True, "b'hello'"), (False, "refused")])
async def test_network_off_cuts_even_loopback(
    workspace: Path, ctx: ToolContext, loopback_port: int, network: bool, expected: str
) -> None:
    script = (
        "import socket\n"
        "try:\n"
        f"    print(socket.create_connection(('127.0.0.1', {loopback_port}), 3).recv(5))\n"
        "except OSError as exc:\n"
        "    print('refused', exc)\n"
    )
    (workspace / "connect.py").write_text(script)
    tool = make_exec(workspace, sandbox=probed_sandbox("bwrap", workspace, network=network))
    result = await tool.execute({"command": f"{PYTHON} connect.py"}, ctx)
    assert expected in result.content


async def test_auto_without_bwrap_asks_and_denies_when_nobody_can_answer(
    workspace: Path, ctx: ToolContext
) -> None:
    sandbox = probed_sandbox("auto", workspace, bwrap="/nonexistent/bwrap")
    assert not sandbox.status.active and "not installed" in sandbox.status.detail
    tool = make_exec(workspace, sandbox=sandbox)

    unattended = await tool.execute({"command": "touch ran"}, ctx)
    assert unattended.status == "error" and "nobody can give it" in unattended.content

    refuser = RecordingApprover("deny")
    denied = await tool.execute(
        {"command": "touch ran"}, ToolContext("s1", workspace, approver=refuser)
    )
    assert denied.status == "error" and "did not approve" in denied.content
    assert not (workspace / "ran").exists()
    assert refuser.requests[0].tool == "exec" and refuser.requests[0].key == "touch ran"
    assert "outside the sandbox" in refuser.requests[0].reason

    approver = RecordingApprover("once")
    ran = await tool.execute(
        {"command": "touch ran"}, ToolContext("s1", workspace, approver=approver)
    )
    assert ran.content == "exit code 0\n(no output)" and (workspace / "ran").exists()


async def test_a_required_sandbox_that_does_not_work_refuses_every_command(
    workspace: Path,
) -> None:
    sandbox = probed_sandbox("bwrap", workspace, bwrap="/nonexistent/bwrap")
    approver = RecordingApprover("once")
    result = await make_exec(workspace, sandbox=sandbox).execute(
        {"command": "touch ran"}, ToolContext("s1", workspace, approver=approver)
    )
    assert result.status == "error" and "required but unavailable" in result.content
    assert approver.requests == [] and not (workspace / "ran").exists()


async def test_sandbox_off_asks_for_every_command(workspace: Path) -> None:
    approver = RecordingApprover("once")
    tool = make_exec(workspace, sandbox=probed_sandbox("off", workspace))
    ctx = ToolContext("s1", workspace, approver=approver)
    for _ in range(2):
        assert (await tool.execute({"command": "true"}, ctx)).content.startswith("exit code 0")
    assert len(approver.requests) == 2


async def test_approval_always_asks_even_inside_the_sandbox(workspace: Path) -> None:
    approver = RecordingApprover("deny")
    tool = make_exec(workspace, policy=ExecPolicy(approval="always"))
    result = await tool.execute(
        {"command": "echo hi"}, ToolContext("s1", workspace, approver=approver)
    )
    assert result.status == "error"
    assert approver.requests[0].reason == "tools.exec.approval is 'always'"


async def test_an_approver_that_never_answers_is_a_denial(workspace: Path) -> None:
    async def silent(_request: object) -> str:
        await asyncio.Event().wait()
        return "once"

    tool = make_exec(
        workspace,
        sandbox=probed_sandbox("off", workspace),
        policy=ExecPolicy(approval_timeout=0.1),
    )
    result = await tool.execute(
        {"command": "touch ran"}, ToolContext("s1", workspace, approver=silent)
    )  # type: ignore[arg-type]
    assert result.status == "error" and not (workspace / "ran").exists()


# Run by an interpreter of a venv under /tmp: its own sandbox runs that interpreter and imports.
_IN_TMP_VENV = """
import asyncio, subprocess, sys
from pathlib import Path
from countbot.execution.sandbox import Sandbox
workspace = Path(sys.argv[1])
sandbox = Sandbox("bwrap", workspace)
assert sandbox.probe().active, sandbox.status
code = "import sys, yaml, countbot; print(sys.prefix)"
argv, env = asyncio.run(sandbox.command("/bin/sh", f"{sys.executable} -c '{code}'", workspace))
result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
print(result.stdout + result.stderr)
"""


def test_a_venv_under_tmp_runs_and_imports_inside_the_private_tmp(outside_tmp: Path) -> None:
    # The sandbox's /tmp is private: a user's venv there (its interpreter, its packages) would be
    # invisible, and every Python MCP server or command from it would fail to start.
    venv = Path(tempfile.mkdtemp(prefix="countbot-venv-", dir="/tmp"))
    try:
        subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        python = venv / "bin" / "python"
        # The venv sees this interpreter's packages and this checkout through a .pth file.
        paths = [p for p in sys.path if p and Path(p).is_dir()]
        site = subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout.strip()
        Path(site, "countbot-test.pth").write_text("\n".join(paths) + "\n")
        result = subprocess.run(
            [python, "-c", _IN_TMP_VENV, str(outside_tmp)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=outside_tmp,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == str(venv), result.stdout
    finally:
        shutil.rmtree(venv)
