"""What race-free confinement costs the file tools: read_file and write_file through the guard
(openat2, and the portable walk older kernels get) against the check-then-use they replaced as
the floor (realpath, then a read, or an atomic write by path: temp file, fsync, rename), each in a
worker thread, at path depths 1 and 8.

    python bench/file_tools.py [--calls 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from countbot.tools.base import Tool, ToolContext
from countbot.tools.beneath import openat2_available
from countbot.tools.files import ReadFileTool, WriteFileTool
from countbot.tools.workspace_guard import WorkspaceGuard

WARMUP = 50


async def median_us(calls: int, action: Callable[[], Awaitable[object]]) -> float:
    for _ in range(WARMUP):
        await action()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        await action()
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def read_by_path(path: Path) -> bytes:
    """The old way: resolve and check the path, then open it again by name."""
    return Path(os.path.realpath(path)).read_bytes()


def write_by_path(path: Path, text: str) -> None:
    """The old way: resolve, then a temporary file and a rename, all by path."""
    real = Path(os.path.realpath(path))
    fd, temp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, real)


async def tool_us(calls: int, tool: Tool, args: dict[str, str], ctx: ToolContext) -> float:
    return await median_us(calls, lambda: tool.execute(args, ctx))


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        ctx = ToolContext("bench", workspace)
        rows = []
        for depth in (1, 8):
            relative = "/".join(["d"] * (depth - 1) + ["note.txt"])
            path = workspace / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("hello\n" * 100)
            floor_read = await median_us(calls, lambda p=path: asyncio.to_thread(read_by_path, p))
            floor_write = await median_us(
                calls, lambda p=path: asyncio.to_thread(write_by_path, p, "hello\n")
            )
            kernels = [("openat2", None)] if openat2_available() else []
            for name, kernel in [*kernels, ("walk", False)]:
                guard = WorkspaceGuard(workspace, kernel=kernel)
                read_us = await tool_us(calls, ReadFileTool(guard), {"path": relative}, ctx)
                args = {"path": relative, "content": "hello\n"}
                write_us = await tool_us(calls, WriteFileTool(guard), args, ctx)
                rows.append((depth, name, read_us, floor_read, write_us, floor_write))
    print(f"median µs per call, {calls} calls; floor = the old check-then-use by path")
    print("depth  resolve   read_file  floor  ratio   write_file  floor  ratio")
    for depth, name, read_us, floor_read, write_us, floor_write in rows:
        read = f"{read_us:>10.0f} {floor_read:>6.0f} {read_us / floor_read:>6.2f}"
        write = f"{write_us:>12.0f} {floor_write:>6.0f} {write_us / floor_write:>6.2f}"
        print(f"{depth:>5}  {name:<8} {read} {write}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    asyncio.run(main(parser.parse_args().calls))
