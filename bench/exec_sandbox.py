"""What the bubblewrap sandbox adds to an `exec` call, and what the guard costs as commands grow.

Runs the real exec tool on `true`, unsandboxed (sandbox off, the user approves) and sandboxed,
interleaved in the same run, and prints the medians and the time the sandbox adds. Then times
the guard's inspection of ordinary and adversarial commands of growing length (it must grow
linearly: the rows' per-KiB cost stays flat).

    python bench/exec_sandbox.py [--runs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from countbot.execution.sandbox import Sandbox
from countbot.execution.shell import ExecTool
from countbot.execution.shell_guard import ShellGuard
from countbot.tools.approval import ApprovalDecision, ApprovalRequest
from countbot.tools.base import ToolContext
from countbot.tools.workspace_guard import WorkspaceGuard

WARMUP = 10
GUARD_SIZES = (1_000, 10_000, 60_000)


async def approve(_request: ApprovalRequest) -> ApprovalDecision:
    return "once"


def exec_tool(workspace: Path, mode: str) -> ExecTool:
    sandbox = Sandbox(mode, workspace)  # type: ignore[arg-type]
    status = sandbox.probe()
    if mode == "bwrap" and not status.active:
        raise SystemExit(f"the sandbox does not work here: {status.detail}")
    return ExecTool(ShellGuard(), WorkspaceGuard(workspace), sandbox)


def children_cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


async def exec_medians(workspace: Path, runs: int) -> dict[str, tuple[float, float]]:
    """Median wall ms and mean child CPU ms of `exec true`, on the host and in the sandbox.

    CPU time is what the machine really spends; wall time also shows how busy it is.
    """
    tools = {"host": exec_tool(workspace, "off"), "boxed": exec_tool(workspace, "bwrap")}
    ctx = ToolContext("bench", workspace, approver=approve)
    walls: dict[str, list[float]] = {name: [] for name in tools}
    cpus: dict[str, float] = dict.fromkeys(tools, 0.0)
    for index in range(WARMUP + runs):
        for name, tool in tools.items():
            cpu, start = children_cpu_ms(), time.perf_counter()
            result = await tool.execute({"command": "true"}, ctx)
            elapsed = (time.perf_counter() - start) * 1000
            assert result.content.startswith("exit code 0"), result.content
            if index >= WARMUP:
                walls[name].append(elapsed)
                cpus[name] += children_cpu_ms() - cpu
    return {name: (statistics.median(walls[name]), cpus[name] / runs) for name in tools}


def guard_ms(command: str, repeats: int = 15) -> float:
    guard = ShellGuard(allow_patterns=[r"^echo\b"])
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        guard.inspect(command)
        best = min(best, time.perf_counter() - start)
    return best * 1000


def guard_inputs(size: int) -> dict[str, str]:
    return {
        "ordinary list": ("ls -la src && git status; " * size)[:size],
        "one long word": "echo " + "a" * size,
        "rm with many args": "rm -r " + "x " * (size // 2),
        "quotes and $( )": ("echo \"$(date)\" 'note' " * size)[:size],
    }


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        rows = await exec_medians(Path(folder), runs)
    (host, host_cpu), (boxed, boxed_cpu) = rows["host"], rows["boxed"]
    load = os.getloadavg()[0]
    print(f"exec of `true`, {runs} runs each (after {WARMUP} warm-up), interleaved")
    print(f"machine: {os.cpu_count()} cores, load average {load:.1f} during the run")
    print()
    print("| exec | median wall ms | added wall ms | child CPU ms | added CPU ms |")
    print("|---|---|---|---|---|")
    print(f"| unsandboxed (sandbox: off, approved) | {host:.1f} | | {host_cpu:.1f} | |")
    print(
        f"| sandboxed (bubblewrap) | {boxed:.1f} | {boxed - host:+.1f} "
        f"| {boxed_cpu:.1f} | {boxed_cpu - host_cpu:+.1f} |"
    )
    print()
    print("guard inspection (best of 15), ms; linear time means the per-KiB cost stays flat")
    print()
    print("| input | " + " | ".join(f"{size:,} chars" for size in GUARD_SIZES) + " | ms per KiB |")
    print("|---|" + "---|" * (len(GUARD_SIZES) + 1))
    rows: dict[str, list[float]] = {}
    for size in GUARD_SIZES:
        for name, command in guard_inputs(size).items():
            rows.setdefault(name, []).append(guard_ms(command))
    for name, values in rows.items():
        per_kib = values[-1] / (GUARD_SIZES[-1] / 1024)
        cells = " | ".join(f"{value:.2f}" for value in values)
        print(f"| {name} | {cells} | {per_kib:.3f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    asyncio.run(main(parser.parse_args().runs))
