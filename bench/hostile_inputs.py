"""Hostile inputs against a real daemon: how long the event loop stalls, how much memory grows.

Run `python bench/hostile_inputs.py` from the repository root. One daemon (uvicorn in this
process, scripted model server in a thread) serves; each hostile input is sent by a client in a
thread (blocking sockets, so the client's own work does not count as the daemon's stall) or, for
tools and parsers, run where the daemon runs it. While each input is processed a task asks to
wake every 5 ms (its worst lateness is the stall every other session would have felt) and a
thread samples the process's RSS every 2 ms (peak minus the RSS before = memory added).
Targets: stall under 50 ms, memory under 50 MB. Each input runs `--repeat` times (default 3);
the table shows the median stall and the largest memory growth.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from websockets.exceptions import ConnectionClosed  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

from countbot.channels.telegram.markup import markdown_to_html  # noqa: E402
from countbot.config.loader import ConfigError, load_settings  # noqa: E402
from countbot.config.settings import WebToolSettings  # noqa: E402
from countbot.llm.tool_args import parse_tool_call  # noqa: E402
from countbot.skills.frontmatter import FrontmatterError, split_frontmatter  # noqa: E402
from countbot.tools.base import ToolContext  # noqa: E402
from countbot.tools.web_fetch import WebFetchTool  # noqa: E402
from countbot.web.context import DaemonContext  # noqa: E402
from countbot.web.daemon import bind_listener, serve_daemon  # noqa: E402
from tests.support.loop_watch import LoopWatch  # noqa: E402
from tests.support.scripted_model import Reply, ScriptedModelServer  # noqa: E402
from tests.tools.local_http import LocalHTTPServer  # noqa: E402
from tests.tools.local_http import Reply as Page  # noqa: E402
from tests.web.conftest import TOKEN, write_config  # noqa: E402

STALL_TARGET_MS = 50.0
MEMORY_TARGET_MB = 50.0
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE_SIZE


class RssPeak:
    """Samples RSS in a thread; `added` is the peak seen minus the RSS at the start."""

    def __init__(self) -> None:
        self.start = rss()
        self.peak = self.start
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> RssPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss())

    def _sample(self) -> None:
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, rss())

    @property
    def added(self) -> int:
        return self.peak - self.start


@dataclass
class Row:
    name: str
    stalls_ms: list[float]
    added_mb: list[float]
    outcome: str


# --- clients that run in threads -----------------------------------------------------------------


def raw_http(port: int, head: bytes, body: bytes = b"", repeat_body: int = 0) -> bytes:
    """Blocking: send a request head and `repeat_body` x `body`; the status line of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        try:
            sock.sendall(head)
            for _ in range(repeat_body):
                sock.sendall(body)
        except OSError:
            pass
        try:
            return sock.recv(200).split(b"\r\n", 1)[0]
        except OSError as exc:
            return f"closed ({exc.__class__.__name__})".encode()


def ws_frames(port: int, frames: list[str]) -> str:
    """Blocking: send frames, each followed by a ping; what came back for the first one."""
    url = f"ws://127.0.0.1:{port}/ws?token={TOKEN}"
    with connect(url, max_size=None, proxy=None) as ws:
        first = ""
        try:
            for frame in frames:
                ws.send(frame)
                ws.send('{"type": "ping"}')
                while True:
                    reply = json.loads(ws.recv(timeout=60))
                    if reply["type"] == "pong":
                        break
                    if reply["type"] in ("error", "done", "session") and not first:
                        said = reply.get("error") or reply.get("content") or reply.get("session_id")
                        first = f"{reply['type']}: {str(said)[:40]}"
        except ConnectionClosed as exc:
            return f"closed {exc.rcvd.code if exc.rcvd else '?'}"
        return first or "no reply"


# --- the inputs --------------------------------------------------------------------------------


def gzipped_twice(size: int) -> bytes:
    inner = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b"a" * (1 << 20)
    once = b"".join(inner.compress(block) for _ in range(size >> 20)) + inner.flush()
    return gzip.compress(once, 9)


def big_frame(size: int) -> str:
    return json.dumps({"type": "message", "session_id": None, "content": "x" * size})


def billion_laughs() -> str:
    lines = ["a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]"]
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]")
    return "\n".join(lines) + "\n"


def cases(
    port: int, pages: LocalHTTPServer, folder: Path
) -> list[tuple[str, Callable[[], Awaitable[str]]]]:
    fetch = WebFetchTool(WebToolSettings(allow_private=True))
    ctx = ToolContext("bench", folder)

    async def fetched(path: str) -> str:
        result = await fetch.execute({"url": pages.url(path)}, ctx)
        return f"{result.status}: {len(result.content):,} chars"

    def threaded(function: Callable[..., object], *args: object) -> Callable[[], Awaitable[str]]:
        async def run() -> str:
            outcome = await asyncio.to_thread(function, *args)
            return outcome.decode() if isinstance(outcome, bytes) else str(outcome)

        return run

    def on_loop(function: Callable[[], object]) -> Callable[[], Awaitable[str]]:
        async def run() -> str:
            try:
                value = function()
            except (ConfigError, FrontmatterError, ValueError) as exc:
                return f"refused: {str(exc).splitlines()[0][:50]}"
            return f"ok: {type(value).__name__}"

        return run

    login_head = (
        b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\n"
    )
    laughs = folder / "laughs.yaml"
    laughs.write_text(billion_laughs())
    huge = "9" * 5000
    return [
        ("web_fetch: 120 KB of unclosed <title", lambda: fetched("/unclosed-titles")),
        ("web_fetch: 156 KB of <html><title>", lambda: fetched("/titles")),
        ("web_fetch: gzip,gzip bomb (1 GiB)", lambda: fetched("/gzip-bomb")),
        ("web_fetch: deflate bomb (512 MiB)", lambda: fetched("/deflate-bomb")),
        (
            "POST /login, declared 200 MB",
            threaded(raw_http, port, login_head + b"Content-Length: 209715200\r\n\r\n"),
        ),
        (
            "POST /login, 20 MB chunked",
            threaded(
                raw_http,
                port,
                login_head + b"Transfer-Encoding: chunked\r\n\r\n",
                b"100000\r\n" + b"x" * 0x100000 + b"\r\n",
                20,
            ),
        ),
        (
            "GET with a 64 MB header",
            threaded(
                raw_http,
                port,
                b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ",
                b"a" * (1 << 20),
                64,
            ),
        ),
        (
            "WS: 5000-digit integer",
            threaded(
                ws_frames, port, [f'{{"type": "subscribe", "session_id": "x", "last_seq": {huge}}}']
            ),
        ),
        ("WS: 100,000 nested [", threaded(ws_frames, port, ["[" * 100_000])),
        (
            "WS: lone surrogates in a message",
            threaded(
                ws_frames,
                port,
                ['{"type": "message", "session_id": null, "content": "a\\ud800b\\udfff"}'],
            ),
        ),
        ("WS: 1.5 MB frame (limit 1 MiB)", threaded(ws_frames, port, [big_frame(3 << 19)])),
        ("WS: 3 MB frame (past the headroom)", threaded(ws_frames, port, [big_frame(3 << 20)])),
        ("config: billion laughs", on_loop(lambda: load_settings(laughs))),
        # The channel converts one message piece at a time, at most Telegram's 4096 characters.
        ("telegram markup: 4 KB piece of [", on_loop(lambda: markdown_to_html("[" * 4096))),
        ("telegram markup: 4 KB piece of **a", on_loop(lambda: markdown_to_html("**a " * 1024))),
        ("telegram markup: 4 KB piece of [a](", on_loop(lambda: markdown_to_html("[a](" * 1024))),
        ("tool arguments: 100 KB of {", on_loop(lambda: parse_tool_call("c", "t", "{" * 100_000))),
        (
            "skill frontmatter: deep nesting",
            on_loop(lambda: split_frontmatter("---\na: " + "[" * 10_000 + "\n---\nbody")),
        ),
    ]


async def measure(name: str, run: Callable[[], Awaitable[str]], repeat: int) -> Row:
    stalls, added, outcome = [], [], ""
    for _ in range(repeat):
        with RssPeak() as memory:
            async with LoopWatch() as watch:
                outcome = await run()
                # Let the ticking task wake: a synchronous stall shows as its lateness.
                await asyncio.sleep(0.02)
        stalls.append(watch.worst * 1000)
        added.append(memory.added / 1e6)
    return Row(name, stalls, added, outcome)


async def wait_for_litellm(context: DaemonContext) -> None:
    """The daemon imports litellm in the background; measure only once it is loaded."""
    for _ in range(1800):
        if context.litellm_ready:
            return
        await asyncio.sleep(0.1)


async def run_all(repeat: int) -> list[Row]:
    routes = {
        "/unclosed-titles": Page(
            200, b"<html>" + b"<title" * 20_000, {"Content-Type": "text/html"}
        ),
        "/titles": Page(200, b"<html><title>" * 12_000, {"Content-Type": "text/html"}),
        "/gzip-bomb": Page(
            200,
            gzipped_twice(1 << 30),
            {"Content-Type": "text/plain", "Content-Encoding": "gzip, gzip"},
        ),
        "/deflate-bomb": Page(
            200,
            zlib.compress(b"a" * (512 << 20), 9),
            {"Content-Type": "text/plain", "Content-Encoding": "deflate"},
        ),
    }
    with (
        ScriptedModelServer() as model,
        LocalHTTPServer(routes) as pages,
        tempfile.TemporaryDirectory() as tmp,
    ):
        folder = Path(tmp)
        settings = load_settings(write_config(folder, model, token=TOKEN))
        model.default = Reply.text("fine")
        with bind_listener("127.0.0.1", 0) as listener:
            async with serve_daemon(settings, listener) as daemon:
                await wait_for_litellm(daemon.context)
                return [
                    await measure(name, run, repeat)
                    for name, run in cases(daemon.port, pages, folder)
                ]


def print_table(rows: list[Row]) -> None:
    print(f"{'hostile input':40} {'stall ms':>9} {'mem MB':>7}  ok  outcome")
    for row in rows:
        stall = statistics.median(row.stalls_ms)
        memory = max(row.added_mb)
        ok = "yes" if stall < STALL_TARGET_MS and memory < MEMORY_TARGET_MB else "NO"
        print(f"{row.name:40} {stall:9.1f} {memory:7.1f}  {ok:3} {row.outcome}")
    print(
        f"\nstall: median of the worst 5 ms-tick lateness per run (target < {STALL_TARGET_MS:g} ms)"
    )
    print(f"mem: largest RSS growth over the run (target < {MEMORY_TARGET_MB:g} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    started = time.perf_counter()
    rows = asyncio.run(run_all(args.repeat))
    print_table(rows)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
