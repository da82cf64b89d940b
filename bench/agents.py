"""Several agents in one daemon: the memory of idle agents and the warm turn with many agents.

Run `python bench/agents.py` from the repository root. For 1, 3 and 10 agents (main plus
idle others, each with its own workspace; embeddings off so the embedder's process is out of
the picture) it starts `countbot run` against the scripted model server (zero delay, a child
process), lets every agent's house open, and reads the daemon's RSS; then it runs warm-up turns
and timed turns with main over the WebSocket and prints the median and p90 of the time to
`done` (the model adds nothing: this is the daemon's own time). The last column is the RSS each
extra agent adds, against the 1-agent row of the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ws_load import (  # noqa: E402
    measure,
    model_ready,
    peak_rss_mib,
    percentile,
    serve_model,
    start_daemon,
)

LEVELS = (1, 3, 10)
TURNS = 40
WARMUP = 8
SETTLE_SECONDS = 3.0  # the other houses open in the background after the daemon listens


def agents_section(count: int, folder: Path) -> dict:
    others = {f"a{n}": {"workspace": str(folder / f"ws-a{n}")} for n in range(1, count)}
    return {"agents": {"others": others}, "memory": {"embeddings": "off"}}


async def one_level(url: str, pid: int, turns: int) -> tuple[float, list[float]]:
    await model_ready(url)
    await asyncio.sleep(SETTLE_SECONDS)
    idle = peak_rss_mib(pid, "VmRSS")
    await measure(url, 1, WARMUP)
    results, _ = await measure(url, 1, turns)
    problems = [p for r in results for p in r.problems]
    if problems:
        raise SystemExit(f"problems: {problems[:5]}")
    return idle, [v * 1000 for r in results for v in r.done]


def bench(levels: tuple[int, ...], turns: int) -> None:
    from tests.support.scripted_model import model_server_process

    argv = [sys.executable, __file__, "--model-server"]
    rows: list[tuple[int, float, list[float]]] = []
    with model_server_process(argv, ROOT) as base_url:
        for count in levels:
            with tempfile.TemporaryDirectory(prefix="countbot-bench-") as tmp:
                folder = Path(tmp)
                extra = agents_section(count, folder)
                daemon, url = start_daemon(folder, base_url, False, extra=extra)
                try:
                    idle, dones = asyncio.run(one_level(url, daemon.pid, turns))
                finally:
                    daemon.terminate()
                    daemon.wait(30)
            rows.append((count, idle, dones))
    print(f"{turns} warm turns with main per row; times in ms; model server delay 0 ms\n")
    print("| agents | idle RSS MiB | per extra agent MiB | done p50 | done p90 | p50 / 1 agent |")
    print("|-------:|-------------:|--------------------:|---------:|---------:|--------------:|")
    base_rss, base_p50 = rows[0][1], statistics.median(rows[0][2])
    for count, idle, dones in rows:
        extra = (idle - base_rss) / (count - 1) if count > 1 else 0.0
        p50 = statistics.median(dones)
        print(
            f"| {count:>6} | {idle:>12.1f} | {extra:>19.2f} | {p50:>8.1f} "
            f"| {percentile(dones, 0.9):>8.1f} | {p50 / base_p50:>13.2f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--agents", type=int, nargs="*", default=list(LEVELS))
    args = parser.parse_args()
    if args.model_server:
        serve_model()
    else:
        started = time.perf_counter()
        bench(tuple(args.agents), args.turns)
        print(f"\n(bench took {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
