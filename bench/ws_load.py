"""WebSocket load on a real daemon: 1, 10 and 100 concurrent clients, 20 turns each.

Run `python bench/ws_load.py` from the repository root. Three processes share the machine: the
scripted model server (zero latency, echoing a marker from each request), the daemon
(`countbot run`), and this load generator. It prints, per level, the median and p99 of the time
the daemon adds before the first streamed chunk and before `done` (client-observed time minus
the model server's own scripted delay, which is zero here), turns per second, the daemon's peak
RSS, and whether any event was lost or reordered (every client checks that its seqs are
contiguous and that the streamed text and `done` match the answer the model was told to give).

It measures twice: the full daemon, then the daemon with its agent loop replaced by an echo, so
the cost of the daemon's own layers (gateway, fan-out, WebSocket) shows apart from the agent's
and litellm's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LEVELS = (1, 10, 100)
FULL_TITLE = "Full daemon: gateway + agent loop + model client + SQLite, scripted model"
ECHO_TITLE = "Daemon layers only: gateway + WebSocket + session store, agent replaced by an echo"
TURNS = 20
WARMUP_TURNS = 5
MARKER = re.compile(r"<<(c\d+-t\d+)>>")


@dataclass
class ClientResult:
    first_chunk: list[float] = field(default_factory=list)
    done: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def serve_model() -> None:
    """Child process: the scripted model server, answering each request with its marker."""
    from tests.support.scripted_model import Reply, ScriptedModelServer, serve_until_stdin_closes

    def answer(body: dict) -> Reply:
        found = MARKER.findall(json.dumps(body.get("messages", [])[-1:]))
        return Reply.text(f"Echo {found[-1] if found else '?'}: all good here.", chunks=5)

    server = ScriptedModelServer()
    server.responder = answer
    serve_until_stdin_closes(server)


def expected_answer(tag: str) -> str:
    return f"Echo {tag}: all good here."


class EchoAgent:
    """Stands in for the agent loop and the model: what is left is the daemon's own work."""

    async def process_message(self, request: Any):
        from countbot.agent.events import TextChunk, TurnDone

        found = MARKER.findall(request.message)
        text = expected_answer(found[-1] if found else "?")
        step = -(-len(text) // 5)
        for start in range(0, len(text), step):
            yield TextChunk(text[start : start + step])
        yield TurnDone(text)


def serve_echo_daemon(config: str) -> None:
    """Child process: the real daemon (gateway, WebSocket, store) around `EchoAgent`."""
    from countbot.config.loader import load_settings
    from countbot.web.daemon import bind_listener, serve_daemon

    settings = load_settings(Path(config))

    async def serve() -> None:
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        with bind_listener("127.0.0.1", 0) as listener:
            async with serve_daemon(settings, listener, turns=EchoAgent()) as daemon:
                print(f"serving http://127.0.0.1:{daemon.port}/", flush=True)
                await stop.wait()

    asyncio.run(serve())


async def run_client(url: str, client: int, turns: int, level: int) -> ClientResult:
    from websockets.asyncio.client import connect

    result = ClientResult()
    session = f"bench-{level}-{client}"
    last_seq: int | None = None
    async with connect(url, proxy=None, max_size=None) as ws:
        for turn in range(turns):
            tag = f"c{client}-t{turn}"
            started = time.perf_counter()
            frame = {"type": "message", "session_id": session, "content": f"say <<{tag}>>"}
            await ws.send(json.dumps(frame))
            first: float | None = None
            streamed = ""
            while True:
                data = json.loads(await ws.recv())
                seq = data.get("seq")
                if seq is None or (last_seq is not None and seq != last_seq + 1):
                    result.problems.append(f"{session}: seq {seq} after {last_seq}")
                last_seq = seq if isinstance(seq, int) else last_seq
                kind = data["type"]
                if kind == "stream":
                    first = first if first is not None else time.perf_counter() - started
                    streamed += data["content"]
                elif kind == "done":
                    result.done.append(time.perf_counter() - started)
                    result.first_chunk.append(first if first is not None else float("nan"))
                    if not (streamed == data["content"] == expected_answer(tag)):
                        result.problems.append(f"{tag}: got {streamed!r} / {data['content']!r}")
                    break
                elif kind in ("error", "cancelled"):
                    result.problems.append(f"{tag}: {kind} {data.get('error', '')}")
                    break
    return result


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def peak_rss_mib(pid: int, field: str = "VmHWM") -> float:
    """The peak RSS of a process (or, with field="VmRSS", its current RSS), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def measure(url: str, clients: int, turns: int) -> tuple[list[ClientResult], float]:
    started = time.perf_counter()
    results = await asyncio.gather(*(run_client(url, c, turns, clients) for c in range(clients)))
    return list(results), time.perf_counter() - started


def row(clients: int, results: list[ClientResult], seconds: float) -> str:
    firsts = [v * 1000 for r in results for v in r.first_chunk]
    dones = [v * 1000 for r in results for v in r.done]
    problems = sum(len(r.problems) for r in results)
    return (
        f"| {clients:>7} | {len(dones):>5} | {len(dones) / seconds:>7.1f} "
        f"| {statistics.median(firsts):>9.1f} | {percentile(firsts, 0.99):>8.1f} "
        f"| {statistics.median(dones):>8.1f} | {percentile(dones, 0.99):>8.1f} | {problems:>6} |"
    )


def write_config(
    folder: Path, base_url: str, provider_path: str = "auto", extra: dict | None = None
) -> Path:
    """A config in `folder` for the scripted model at `base_url`, on any free port; `extra`:
    more top-level sections (a bench row that changes one setting)."""
    config = folder / "config.yaml"
    config.write_text(
        json.dumps(  # JSON is YAML
            {
                "model": {
                    "name": "openai/bench-model",
                    "api_base": base_url,
                    "api_key": "sk-bench",
                    "vision": False,
                    "provider_path": provider_path,
                },
                "workspace": str(folder / "workspace"),
                "data_dir": str(folder / "data"),
                "web": {"host": "127.0.0.1", "port": 0},
                **(extra or {}),
            }
        )
    )
    return config


def start_daemon(
    folder: Path, base_url: str, echo: bool, provider_path: str = "auto", extra: dict | None = None
) -> tuple[subprocess.Popen[str], str]:
    config = write_config(folder, base_url, provider_path, extra)
    if echo:
        command = [sys.executable, __file__, "--echo-daemon", str(config)]
    else:
        command = [sys.executable, "-m", "countbot", "run", "--config", str(config)]
    daemon = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_PROXY": "*"},
    )
    assert daemon.stdout is not None
    line = daemon.stdout.readline()
    found = re.search(r"http://(127\.0\.0\.1:\d+)/", line)
    if not found:
        daemon.kill()
        raise SystemExit(f"the daemon did not start: {line!r}")
    return daemon, f"ws://{found.group(1)}/ws"


async def model_ready(url: str) -> None:
    """Wait for the daemon's background litellm import, so levels measure the steady state."""
    import httpx

    health = url.replace("ws://", "http://").replace("/ws", "/api/health")
    async with httpx.AsyncClient(trust_env=False) as http:
        for _ in range(600):
            if (await http.get(health)).json().get("model_ready"):
                return
            await asyncio.sleep(0.1)
    raise SystemExit("the daemon never reported model_ready")


async def run_levels(url: str, levels: tuple[int, ...], turns: int) -> list[str]:
    """Print one table row per level; returns every problem seen."""
    await model_ready(url)
    await measure(url, 2, WARMUP_TURNS)  # first connections, first requests
    print("| clients | turns | turns/s | first p50 | first p99 | done p50 | done p99 | lost |")
    print("|--------:|------:|--------:|----------:|----------:|---------:|---------:|-----:|")
    problems: list[str] = []
    for clients in levels:
        results, seconds = await measure(url, clients, turns)
        print(row(clients, results, seconds), flush=True)
        problems += [p for r in results for p in r.problems]
    return problems


def bench(levels: tuple[int, ...], turns: int) -> None:
    from tests.support.scripted_model import model_server_process

    argv = [sys.executable, __file__, "--model-server"]
    with model_server_process(argv, ROOT) as base_url:
        print(f"{turns} turns per client; times in ms; model server delay 0 ms")
        for echo, title in ((False, FULL_TITLE), (True, ECHO_TITLE)):
            with tempfile.TemporaryDirectory(prefix="countbot-bench-") as tmp:
                daemon, url = start_daemon(Path(tmp), base_url, echo)
                try:
                    print(f"\n{title}\n")
                    problems = asyncio.run(run_levels(url, levels, turns))
                    print(f"\ndaemon peak RSS: {peak_rss_mib(daemon.pid):.0f} MiB")
                    for problem in problems[:20]:
                        print(f"problem: {problem}")
                finally:
                    daemon.terminate()
                    daemon.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--echo-daemon", metavar="CONFIG", help=argparse.SUPPRESS)
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--clients", type=int, nargs="*", default=list(LEVELS))
    args = parser.parse_args()
    if args.model_server:
        serve_model()
    elif args.echo_daemon:
        serve_echo_daemon(args.echo_daemon)
    else:
        bench(tuple(args.clients), args.turns)


if __name__ == "__main__":
    main()
