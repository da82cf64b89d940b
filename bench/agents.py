"""Several agents in one daemon: the memory of idle agents and the warm turn with many agents.

Run `python bench/agents.py` from the repository root. It starts one `countbot run` per row at
once (1, 3 and 10 agents: main plus idle others, each with its own workspace; embeddings off so
the embedder's process is out of the picture; and a second 1-agent daemon, `1 again`) against
the scripted model server (zero delay, a child process), lets every house open and reads each
daemon's RSS. Then it interleaves warm turns with main over the WebSocket: round after round,
`--turns` turns on each daemon in turn (the order reversed every other round), so every row sees
the same load. Per turn it records the time to `done` (the model adds nothing: the daemon's own
time) and the CPU the daemon's threads used meanwhile (/proc schedstat). The turn table gives
medians and the interquartile range over all turns, and each round's median against the round's
`1` median (median and range over rounds): `1 again` against `1` is what noise alone does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ws_load import (  # noqa: E402
    expected_answer,
    model_ready,
    peak_rss_mib,
    percentile,
    serve_model,
    start_daemon,
)

# Agents per daemon, by row; `1 again` is a second daemon like `1`, the noise's own measure.
ROWS = (("1", 1), ("1 again", 1), ("3", 3), ("10", 10))
ROUNDS = 10
TURNS = 20
WARMUP = 8
SETTLE_SECONDS = 3.0  # the other houses open in the background after the daemon listens


def agents_section(count: int, folder: Path) -> dict:
    others = {f"a{n}": {"workspace": str(folder / f"ws-a{n}")} for n in range(1, count)}
    return {"agents": {"others": others}, "memory": {"embeddings": "off"}}


def cpu_ms(pid: int) -> float:
    """The CPU time all threads of process `pid` used so far, in ms (ns-precise schedstat)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            total += int((task / "schedstat").read_text().split()[0])
    return total / 1e6


@dataclass
class Row:
    """One daemon: its agents, where it listens, and what its turns took."""

    name: str
    agents: int
    daemon: subprocess.Popen[str]
    url: str
    idle_mib: float = 0.0
    wall: list[float] = field(default_factory=list)  # ms per turn
    cpu: list[float] = field(default_factory=list)  # ms per turn
    rounds: list[tuple[float, float]] = field(default_factory=list)  # (wall, cpu) medians


async def turns(row: Row, count: int, first: int, keep: bool) -> None:
    """`count` turns with main in one session, each checked; kept in `row` when `keep`."""
    from websockets.asyncio.client import connect

    walls: list[float] = []
    cpus: list[float] = []
    async with connect(row.url, proxy=None, max_size=None) as ws:
        for number in range(first, first + count):
            tag = f"c0-t{number}"
            frame = {"type": "message", "session_id": "bench", "content": f"say <<{tag}>>"}
            cpu, started = cpu_ms(row.daemon.pid), time.perf_counter()
            await ws.send(json.dumps(frame))
            while True:
                data = json.loads(await ws.recv())
                if data["type"] in ("done", "error", "cancelled"):
                    break
            walls.append((time.perf_counter() - started) * 1000)
            cpus.append(cpu_ms(row.daemon.pid) - cpu)
            if data.get("content") != expected_answer(tag):
                raise SystemExit(f"{row.name}: {tag} answered {data}")
    if keep:
        row.wall += walls
        row.cpu += cpus
        row.rounds.append((statistics.median(walls), statistics.median(cpus)))


async def measure(rows: list[Row], rounds: int, count: int) -> None:
    for row in rows:
        await model_ready(row.url)
    await asyncio.sleep(SETTLE_SECONDS)
    for row in rows:
        row.idle_mib = peak_rss_mib(row.daemon.pid, "VmRSS")
    for row in rows:
        await turns(row, WARMUP, 0, keep=False)
    for number in range(rounds):
        for row in rows if number % 2 == 0 else rows[::-1]:
            await turns(row, count, WARMUP + number * count, keep=True)


def spread(values: list[float]) -> str:
    return f"{percentile(values, 0.25):.1f}–{percentile(values, 0.75):.1f}"


def against_one(row: Row, one: Row, part: int) -> str:
    """Each round's median over the same round's `1` median: median [min–max] over rounds."""
    ratios = [mine[part] / base[part] for mine, base in zip(row.rounds, one.rounds, strict=True)]
    return f"{statistics.median(ratios):.2f} [{min(ratios):.2f}–{max(ratios):.2f}]"


def report(rows: list[Row], rounds: int, count: int) -> None:
    one = rows[0]
    print("| daemon | agents | idle RSS MiB | per extra agent MiB |")
    print("|--------|-------:|-------------:|--------------------:|")
    for row in rows:
        extra = (row.idle_mib - one.idle_mib) / (row.agents - 1) if row.agents > 1 else 0.0
        print(f"| {row.name} | {row.agents} | {row.idle_mib:.1f} | {extra:.2f} |")
    print(f"\n{rounds} rounds of {count} warm turns with main per daemon, interleaved; ms\n")
    print(
        "| daemon | turns | done p50 | done IQR | done / 1, by round "
        "| CPU p50 | CPU IQR | CPU / 1, by round |"
    )
    print("|--------|------:|---------:|---------:|---:|--------:|--------:|---:|")
    for row in rows:
        print(
            f"| {row.name} | {len(row.wall)} | {statistics.median(row.wall):.1f} "
            f"| {spread(row.wall)} | {against_one(row, one, 0)} "
            f"| {statistics.median(row.cpu):.1f} | {spread(row.cpu)} | {against_one(row, one, 1)} |"
        )


def bench(rounds: int, count: int) -> None:
    from tests.support.scripted_model import model_server_process

    argv = [sys.executable, __file__, "--model-server"]
    load = os.getloadavg()
    with (
        model_server_process(argv, ROOT) as base_url,
        contextlib.ExitStack() as stack,
    ):
        rows: list[Row] = []
        for name, agents in ROWS:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="countbot-")))
            extra = agents_section(agents, folder)
            daemon, url = start_daemon(folder, base_url, False, extra=extra)
            stack.callback(daemon.wait, 30)
            stack.callback(daemon.terminate)
            rows.append(Row(name, agents, daemon, url))
        asyncio.run(measure(rows, rounds, count))
    report(rows, rounds, count)
    print(f"\nload average (1 min) at the start {load[0]:.1f}, at the end {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--turns", type=int, default=TURNS, help="turns per daemon and round")
    args = parser.parse_args()
    if args.model_server:
        serve_model()
    else:
        started = time.perf_counter()
        bench(args.rounds, args.turns)
        print(f"(bench took {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
