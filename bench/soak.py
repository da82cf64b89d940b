"""A soak through the real daemon: the same work in phases over new sessions, memory per phase.

Run `python bench/soak.py` from the repository root (`--full` for the issue's size: 20 phases of
1,000 turns over 150 new sessions each, 20,000 turns; the default is scaled down to run in
minutes on a loaded 2-core machine). Three kinds of process share the machine: the scripted model
server, the daemon (`countbot run` with the default config: auto-recall with the offline model in
the vector worker), and this client. Every turn is a tool turn: the model reads one of the
workspace's files of `--result-kb` KB (`read_file`), then answers, so each turn stores and indexes
a large tool result. Each phase's turns go over new sessions, from `--connections` WebSocket
connections at once (one turn at a time each), in two modes, each on a daemon of its own:

- `kept`: the connections stay open through every phase (browser tabs left open), so each stays
  subscribed to every session it sent a message in;
- `reconnect`: new connections for each phase.

After each phase (once the memory index has indexed and embedded it, and the daemon has had a
quiet second to trim its heap) it reads the daemon's and each of its child processes' RSS
(`VmRSS`; for the vector worker also its anonymous part, `RssAnon`, which memory-mapped files are
not), the turns' p50 / p95 time as the client sees them (model latency 0), and the size of the
data folder's databases (store and memory index) per 1,000 turns. Target (issue 40): the last
phase's memory at most 5% above the second's, turn time flat.

    python bench/soak.py [--phases 4] [--turns 200] [--sessions 40] [--connections 4]
                         [--result-kb 20] [--modes kept reconnect] [--full]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ws_load import model_ready, percentile, start_daemon  # noqa: E402

FILES = 50  # distinct files the turns read, so the index holds distinct results
WORDS = ("apple", "river", "cloud", "stone", "paper", "light", "garden", "window", "orange")
QUIET_WAIT = 2.0  # s after a phase is indexed: the daemon trims its heap once quiet for 1 s
MEMORY_TARGET = 1.05  # the last phase's memory over the second's


@dataclass
class Phase:
    """One phase's figures."""

    turns: list[float] = field(default_factory=list)  # seconds each
    memory: dict[str, float] = field(default_factory=dict)  # process -> MiB
    data_mib: float = 0.0
    problems: list[str] = field(default_factory=list)


def serve_model() -> None:
    """Child process: the scripted model: a `read_file` call for a user's message, then an
    answer once the tool's result is in."""
    from tests.support.scripted_model import Reply, ScriptedModelServer, serve_until_stdin_closes

    server = ScriptedModelServer()

    def answer(body: dict) -> Reply:
        server.requests.clear()  # a soak's requests would pile up in the server
        last = (body.get("messages") or [{}])[-1]
        if last.get("role") == "user" and body.get("tools"):
            found = [w for w in str(last.get("content")).split() if w.startswith("files/")]
            if found:
                return Reply.tool_calls(("read_file", json.dumps({"path": found[-1]})))
        return Reply.text("I read it: the file lists fruit, weather and music notes.", chunks=5)

    server.responder = answer
    serve_until_stdin_closes(server)


def write_files(workspace: Path, kb: int) -> None:
    """`FILES` text files of `kb` KB each, of different words, for the turns to read."""
    folder = workspace / "files"
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(FILES):
        rng = random.Random(n)
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < kb * 1024:
            words.append(f"{rng.choice(WORDS)}{rng.randrange(1000)}")
        (folder / f"{n}.txt").write_text(" ".join(words))


async def turn(ws: object, session: str, n: int, phase: Phase) -> None:
    """One turn in `session` over the connection `ws`: sent, then read until its end."""
    frame = {"type": "message", "session_id": session, "content": f"read files/{n % FILES}.txt"}
    started = time.perf_counter()
    await ws.send(json.dumps(frame))  # type: ignore[attr-defined]
    while True:
        data = json.loads(await ws.recv())  # type: ignore[attr-defined]
        if data.get("session_id") != session:
            continue
        if data["type"] == "done":
            phase.turns.append(time.perf_counter() - started)
            return
        if data["type"] in ("error", "cancelled"):
            phase.problems.append(f"{session}: {data['type']} {data.get('error', '')}")
            return


async def run_phase(connections: list[object], sessions: list[str], turns: int) -> Phase:
    """`turns` turns spread over `sessions`, each connection taking its share in turn."""
    phase = Phase()
    # Turn n goes to session n mod S, and a session always to the same connection, so each
    # session has one turn at a time and the phase runs exactly `turns` turns.
    order = [(n, sessions[n % len(sessions)]) for n in range(turns)]
    shares = [
        [(n, s) for n, s in order if n % len(sessions) % len(connections) == i]
        for i in range(len(connections))
    ]

    async def client(ws: object, mine: list[tuple[int, str]]) -> None:
        for n, session in mine:
            await turn(ws, session, n, phase)

    await asyncio.gather(*(client(ws, mine) for ws, mine in zip(connections, shares, strict=True)))
    return phase


async def settled(base: str) -> None:
    """Until the memory index has indexed and embedded everything (3 minutes at most)."""
    import httpx

    async with httpx.AsyncClient(trust_env=False, timeout=60) as http:
        for _ in range(360):
            status = (await http.get(f"{base}/api/memory/index")).json()
            if status["vectors"] >= status["entries"] or not status["model"]:
                break
            await asyncio.sleep(0.5)
    await asyncio.sleep(QUIET_WAIT)


def process_memory(pid: int) -> dict[str, float]:
    """RSS in MiB of the daemon and each child of it, by the module a child runs."""
    found = {"daemon": _status(pid, "VmRSS")}
    for child in _children(pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        name = next((a.decode() for a in reversed(argv) if a.startswith(b"countbot.")), "child")
        name = name.rsplit(".", 1)[-1]
        found[name] = _status(child, "VmRSS")
        if name == "vector_worker":
            found["vector_worker anon"] = _status(child, "RssAnon")
    return found


def _children(pid: int) -> list[int]:
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            children.append(int(stat.parent.name))
    return children


def _status(pid: int, key: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{key}:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def databases_mib(data: Path) -> float:
    """The SQLite files of the data folder (the store and the memory index, WAL included)."""
    return sum(f.stat().st_size for f in data.glob("*.db*") if f.is_file()) / 2**20


async def soak(mode: str, url: str, pid: int, data: Path, args: argparse.Namespace) -> list[Phase]:
    from websockets.asyncio.client import connect

    base = url.replace("ws://", "http://").removesuffix("/ws")
    await model_ready(url)
    phases: list[Phase] = []
    kept = [await connect(url, proxy=None, max_size=None) for _ in range(args.connections)]
    try:
        for number in range(args.phases):
            sessions = [f"soak-{mode}-p{number}-s{i}" for i in range(args.sessions)]
            if mode == "kept":
                phase = await run_phase(kept, sessions, args.turns)
            else:
                fresh = [await connect(url, proxy=None, max_size=None) for _ in kept]
                try:
                    phase = await run_phase(fresh, sessions, args.turns)
                finally:
                    for ws in fresh:
                        await ws.close()
            await settled(base)
            phase.memory = process_memory(pid)
            phase.data_mib = databases_mib(data)
            phases.append(phase)
            memory = ", ".join(f"{k} {v:.1f}" for k, v in phase.memory.items())
            ms = [t * 1000 for t in phase.turns] or [float("nan")]
            # The figures as they come: a long run stopped early still leaves its rows.
            print(
                f"  {time.strftime('%H:%M:%S')} {mode} phase {number + 1}: {len(phase.turns)} "
                f"turns, p50 {statistics.median(ms):.1f} ms, p95 {percentile(ms, 0.95):.1f} ms; "
                f"MiB {memory}; databases {phase.data_mib:.1f} MiB",
                flush=True,
            )
    finally:
        for ws in kept:
            await ws.close()
    return phases


def report(mode: str, phases: list[Phase]) -> None:
    names = list(phases[0].memory)
    print(f"\n### {mode}\n")
    head = " | ".join(f"{n} MiB" for n in names)
    print(f"| phase | turns | turn p50 ms | turn p95 ms | {head} | databases MiB per 1,000 turns |")
    print("|---|---:|---:|---:|" + "---:|" * len(names) + "---:|")
    done = 0
    for number, phase in enumerate(phases, 1):
        done += len(phase.turns)
        ms = [t * 1000 for t in phase.turns]
        memory = " | ".join(f"{phase.memory.get(n, float('nan')):.1f}" for n in names)
        print(
            f"| {number} | {len(ms)} | {statistics.median(ms):.1f} | {percentile(ms, 0.95):.1f} "
            f"| {memory} | {phase.data_mib / done * 1000:.1f} |"
        )
    if len(phases) >= 3:
        second, last = phases[1], phases[-1]
        ratios = ", ".join(
            f"{n} {last.memory[n] / second.memory[n]:.3f}"
            for n in names
            if n in second.memory and n in last.memory and second.memory[n]
        )
        p50 = statistics.median(last.turns) / statistics.median(second.turns)
        print(f"\nlast phase / second: memory {ratios}; turn p50 {p50:.2f}")
        print(f"(target: memory at most {MEMORY_TARGET:.2f}, turn time flat)")
    problems = [p for phase in phases for p in phase.problems]
    for problem in problems[:10]:
        print(f"problem: {problem}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--phases", type=int, default=4)
    parser.add_argument("--turns", type=int, default=200, help="turns per phase")
    parser.add_argument("--sessions", type=int, default=40, help="new sessions per phase")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--result-kb", type=int, default=20)
    parser.add_argument("--modes", nargs="+", default=["kept", "reconnect"])
    parser.add_argument(
        "--full", action="store_true", help="20 phases of 1,000 turns, 150 sessions"
    )
    args = parser.parse_args()
    if args.model_server:
        serve_model()
        return
    if args.full:
        args.phases, args.turns, args.sessions = 20, 1_000, 150
    from tests.support.scripted_model import model_server_process

    print(
        f"{args.phases} phases of {args.turns} turns over {args.sessions} new sessions each, "
        f"{args.connections} connections, {args.result_kb} KB tool results; model latency 0"
    )
    argv = [sys.executable, __file__, "--model-server"]
    with model_server_process(argv, ROOT) as base_url:
        for mode in args.modes:
            with tempfile.TemporaryDirectory(prefix="countbot-soak-") as tmp:
                folder = Path(tmp)
                write_files(folder / "workspace", args.result_kb)
                daemon, url = start_daemon(folder, base_url, echo=False)
                try:
                    phases = asyncio.run(soak(mode, url, daemon.pid, folder / "data", args))
                finally:
                    daemon.terminate()
                    daemon.wait(60)
                report(mode, phases)


if __name__ == "__main__":
    main()
