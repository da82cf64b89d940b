"""What a user meets first: `countbot chat -m` with no daemon, and the daemon's memory and stop.

Run `python bench/cold_start.py` from the repository root. The scripted model server (zero
latency) runs in its own process. In rounds, interleaved so drift on a shared machine hits every
path alike, each in a fresh process:

  floor    a raw httpx streaming call to the same server (`python -c`, httpx and json only);
  direct   `countbot chat -m hi` with `model.provider_path: direct`;
  litellm  the same with `model.provider_path: litellm`.

It prints medians of wall time, CPU time and peak RSS (the child's own, from wait4) and the
ratios to the floor. The first run of each path is not counted (it seeds the workspace and
writes bytecode and the compiled dataclass methods, as a user's first chat does).
Then, per path, a daemon (`countbot run`): RSS when idle and ready, after 100 sessions of
one turn each over the WebSocket (10 at a time), and the time from SIGTERM to exit, beside its
floor: an empty Python that imported asyncio, sqlite3 and ssl. The direct path's daemon runs a
second time with `memory.embeddings: off`. The memory index's embedder runs in a process of its
own (the sidecar, started at the first thing to embed and ended after `memory.embeddings_idle`,
2 s here): its RSS after the load is a column of its own, with its anonymous memory beside it
(the rest is mapped files, the model's arrays among them, clean pages the kernel may drop), and
a last column shows the daemon's RSS once the sidecar has ended. A last table puts each figure
beside its floor and its target (issue 27, in its decimal megabytes; the tables print MiB):
`chat -m` at most 2x the floor's wall time and under 60 MB; the daemon at most 40 MB idle and
60 MB after the 100 sessions.

    python bench/cold_start.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.ws_load import ROOT, model_ready, peak_rss_mib, start_daemon, write_config

PATHS = ("direct", "litellm")
# The daemon's rows: each path with the default embedder (when the `memory` extra is installed),
# and the direct path without it, so the embedder's share of the memory shows.
EMBEDDER = "use-multilingual"
DAEMON_ROWS = (("direct", EMBEDDER), ("direct", "off"), ("litellm", EMBEDDER))
EMBEDDINGS_IDLE = 2.0  # s: `memory.embeddings_idle` in the daemon rows
SESSIONS = 100
CONCURRENCY = 10
CHAT_WALL_TARGET = 2.0  # x the floor's wall time
MB = 1e6 / 2**20  # the megabytes, in the MiB RSS is read in
CHAT_RSS_TARGET = 60 * MB  # 57.2 MiB
IDLE_RSS_TARGET = 40 * MB  # 38.1 MiB
LOADED_RSS_TARGET = 60 * MB
EMPTY_DAEMON = """
import asyncio, sqlite3, ssl, sys
for line in open("/proc/self/status"):
    if line.startswith("VmRSS:"):
        sys.stdout.write(str(int(line.split()[1]) / 1024))
"""
FLOOR = """
import json, sys, httpx
body = {"model": "bench-model", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
with httpx.Client(trust_env=False) as client:
    with client.stream("POST", sys.argv[1] + "/chat/completions", json=body) as reply:
        text = []
        for line in reply.iter_lines():
            if line.startswith("data: {"):
                for choice in json.loads(line[6:])["choices"]:
                    text.append(choice["delta"].get("content") or "")
print("".join(text))
"""


def mb(mib: float) -> str:
    """A target as the issue writes it (decimal megabytes) and in the tables' MiB."""
    return f"{mib / MB:g} MB ({mib:.1f} MiB)"


def serve_model() -> None:
    """Child process: the scripted model server, one short answer for every request."""
    from tests.support.scripted_model import Reply, ScriptedModelServer, serve_until_stdin_closes

    answer = Reply.text("Hello from the benchmark.", chunks=3, usage=(20, 5))
    server = ScriptedModelServer(default=answer)

    def respond(body: dict) -> Reply:
        server.reset()
        return answer

    server.responder = respond
    serve_until_stdin_closes(server)


def timed_child(argv: list[str]) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system) of one child process run to
    its end: on a shared machine the CPU time moves less with the load than the wall time."""
    env = {**os.environ, "NO_PROXY": "*"}
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    output = child.stdout.read() if child.stdout else ""
    if child.returncode != 0 or "Hello" not in output:
        raise SystemExit(f"{argv} failed ({child.returncode}): {output!r}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


FLOOR_RUN = "floor: raw httpx call"


def cold_table(
    base_url: str, configs: dict[str, Path], rounds: int
) -> dict[str, tuple[float, float]]:
    """Print the `chat -m` table; returns each run's median wall seconds and peak RSS MiB."""
    commands = {FLOOR_RUN: [sys.executable, "-c", FLOOR, base_url]}
    for path, config in configs.items():
        command = [sys.executable, "-m", "countbot", "chat", "--config", str(config), "-m", "hi"]
        commands[f"chat -m, {path} path"] = command
        # The first run seeds the workspace, creates the store and compiles the dataclass
        # methods later runs read back (`speedups/compiled_methods.py`), as a user's first chat
        # does.
        timed_child(command)
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            samples[name].append(timed_child(command))
    medians = {
        name: tuple(statistics.median(sample[i] for sample in values) for i in range(3))
        for name, values in samples.items()
    }
    floor, floor_cpu = medians[FLOOR_RUN][0], medians[FLOOR_RUN][2]
    print(f"`countbot chat -m hi` with no daemon, fresh process; median of {rounds} rounds\n")
    print("| run | wall s | CPU s | peak RSS MiB | wall / floor | CPU / floor | within targets |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, (wall, rss, cpu) in medians.items():
        ok = wall / floor <= CHAT_WALL_TARGET and rss < CHAT_RSS_TARGET
        verdict = "(floor)" if name == FLOOR_RUN else ("yes" if ok else "NO")
        print(
            f"| {name} | {wall:.2f} | {cpu:.2f} | {rss:.0f} | {wall / floor:.1f}x "
            f"| {cpu / floor_cpu:.1f}x | {verdict} |"
        )
    print(
        f"\ntargets: wall at most {CHAT_WALL_TARGET:g}x the floor, peak RSS under "
        f"{mb(CHAT_RSS_TARGET)}"
    )
    return {name: (wall, rss) for name, (wall, rss, _) in medians.items()}


async def one_session(url: str, number: int) -> None:
    from websockets.asyncio.client import connect

    session = f"bench-{number}"
    async with connect(url, proxy=None, max_size=None) as ws:
        await ws.send(json.dumps({"type": "message", "session_id": session, "content": "hi"}))
        async for raw in ws:
            frame = json.loads(raw)
            if frame.get("session_id") == session and frame.get("type") in ("done", "error"):
                assert frame["type"] == "done", frame
                return


async def load(url: str) -> None:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def run(number: int) -> None:
        async with gate:
            await one_session(url, number)

    await asyncio.gather(*(run(n) for n in range(SESSIONS)))


@dataclass(frozen=True)
class DaemonFigures:
    """One daemon's memory (MiB) and stop time (s)."""

    name: str
    idle: float
    loaded: float
    peak: float
    sidecar: float  # the embedder's process, after the load (0: none runs)
    sidecar_anonymous: float  # of it, the process's own memory (the rest: mapped files)
    rested: float
    stop: float

    def row(self) -> str:
        ok = self.idle <= IDLE_RSS_TARGET and self.loaded <= LOADED_RSS_TARGET
        return (
            f"| {self.name} | {self.idle:.1f} | {self.loaded:.1f} | {self.peak:.1f} "
            f"| {self.sidecar:.0f} ({self.sidecar_anonymous:.0f}) | {self.rested:.0f} "
            f"| {self.stop:.2f} "
            f"| {'yes' if ok else 'NO'} |"
        )


def children_rss_mib(pid: int) -> tuple[float, float]:
    """The current RSS of a process's children (the embedder's sidecar), and of it the
    anonymous memory (the rest is mapped files: libraries, the model's arrays), in MiB."""
    totals = {"Rss": 0.0, "Anonymous": 0.0}
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        for line in Path(f"/proc/{child}/smaps_rollup").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in totals:
                totals[name] += int(value.split()[0]) / 1024
    return totals["Rss"], totals["Anonymous"]


def daemon_figures(path: str, folder: Path, base_url: str, embeddings: str) -> DaemonFigures:
    # A short idle limit (the default is 300 s) so the row also shows RSS once the sidecar has
    # ended; the load keeps it busy, so the figures under load are the default's.
    extra = {"memory": {"embeddings": embeddings, "embeddings_idle": EMBEDDINGS_IDLE}}
    daemon, url = start_daemon(folder, base_url, echo=False, provider_path=path, extra=extra)
    try:
        asyncio.run(model_ready(url))
        time.sleep(1.0)
        idle = peak_rss_mib(daemon.pid, "VmRSS")
        asyncio.run(load(url))
        loaded, peak = peak_rss_mib(daemon.pid, "VmRSS"), peak_rss_mib(daemon.pid)
        sidecar, sidecar_anonymous = children_rss_mib(daemon.pid)
        time.sleep(EMBEDDINGS_IDLE + 1.5)
        rested = peak_rss_mib(daemon.pid, "VmRSS")
        started = time.perf_counter()
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
        stop = time.perf_counter() - started
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    name = path if embeddings == EMBEDDER else f"{path}, memory.embeddings: {embeddings}"
    return DaemonFigures(name, idle, loaded, peak, sidecar, sidecar_anonymous, rested, stop)


def empty_python_rss() -> float:
    """The daemon's floor: a Python that imported what any asyncio + SQLite + TLS server needs."""
    return float(subprocess.run([sys.executable, "-c", EMPTY_DAEMON], capture_output=True).stdout)


def daemon_table(tmp: Path, base_url: str, floor: float) -> list[DaemonFigures]:
    print(f"\nDaemon (`countbot run`): RSS idle and after {SESSIONS} sessions of one turn\n")
    print(
        "| path | idle RSS MiB | RSS after load MiB | peak RSS MiB "
        "| embedder process RSS MiB (anonymous) "
        f"| RSS {EMBEDDINGS_IDLE + 1.5:g} s after load MiB | SIGTERM to exit s "
        "| within targets |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    empty = "floor: empty Python (asyncio, sqlite3, ssl)"
    print(f"| {empty} | {floor:.1f} | {floor:.1f} | | | | | (floor) |")
    rows = []
    for path, embeddings in DAEMON_ROWS:
        folder = tmp / f"daemon-{path}-{embeddings}"
        folder.mkdir()
        rows.append(daemon_figures(path, folder, base_url, embeddings))
        print(rows[-1].row(), flush=True)
    print(
        f"\ntargets: idle at most {mb(IDLE_RSS_TARGET)}, after {SESSIONS} sessions at most "
        f"{mb(LOADED_RSS_TARGET)}"
    )
    return rows


def targets_table(
    chat: dict[str, tuple[float, float]], daemons: list[DaemonFigures], floor: float
) -> None:
    """Each figure of issue 27's floor beside its floor and its target (direct path)."""
    floor_wall, floor_rss = chat[FLOOR_RUN]
    wall, rss = chat["chat -m, direct path"]
    with_embedder, without = daemons[0], daemons[1]
    rows = [
        (
            "`chat -m` wall",
            f"{floor_wall:.2f} s",
            f"{wall:.2f} s ({wall / floor_wall:.1f}x)",
            f"at most {CHAT_WALL_TARGET:g}x",
            wall / floor_wall <= CHAT_WALL_TARGET,
        ),
        (
            "`chat -m` peak RSS",
            f"{floor_rss:.0f} MiB",
            f"{rss:.0f} MiB",
            f"under {mb(CHAT_RSS_TARGET)}",
            rss < CHAT_RSS_TARGET,
        ),
        (
            "daemon idle RSS",
            f"{floor:.1f} MiB",
            f"{with_embedder.idle:.1f} MiB",
            f"at most {mb(IDLE_RSS_TARGET)}",
            with_embedder.idle <= IDLE_RSS_TARGET,
        ),
    ]
    for figures in (with_embedder, without):
        sidecar = (
            f" (+ {figures.sidecar:.0f} embedder, {figures.sidecar_anonymous:.0f} of it anonymous)"
            if figures.sidecar
            else ""
        )
        rows.append(
            (
                f"daemon RSS after {SESSIONS} sessions, {figures.name}",
                f"{floor:.1f} MiB",
                f"{figures.loaded:.1f} MiB{sidecar}",
                f"at most {mb(LOADED_RSS_TARGET)}",
                figures.loaded + figures.sidecar <= LOADED_RSS_TARGET,
            )
        )
    print("\nIssue 27's targets, direct path, beside the floor\n")
    print("| figure | floor | CountBot | target | met |")
    print("|---|---:|---:|---|---|")
    for name, floor_text, ours, target, met in rows:
        print(f"| {name} | {floor_text} | {ours} | {target} | {'yes' if met else 'no'} |")


def bench(rounds: int) -> None:
    from tests.support.scripted_model import model_server_process

    # An installed CountBot runs from compiled bytecode; without this every child would compile
    # CountBot's modules again (litellm's and httpx's come compiled from pip either way).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

    with (
        model_server_process([sys.executable, __file__, "--model-server"], ROOT) as base_url,
        tempfile.TemporaryDirectory(prefix="countbot-cold-") as tmp,
    ):
        configs = {}
        for path in PATHS:
            folder = Path(tmp) / path
            folder.mkdir()
            configs[path] = write_config(folder, base_url, path)
        chat = cold_table(base_url, configs, rounds)
        floor = empty_python_rss()
        daemons = daemon_table(Path(tmp), base_url, floor)
        targets_table(chat, daemons, floor)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    if args.model_server:
        serve_model()
    else:
        bench(args.rounds)


if __name__ == "__main__":
    main()
