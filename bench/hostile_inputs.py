"""Hostile inputs against a real daemon: how long the event loop stalls, how much memory grows.

Run `python bench/hostile_inputs.py` from the repository root. One daemon (uvicorn in this
process, scripted model server and fake Telegram server beside it) serves, and every input goes
in the way it would in use: a request or a WebSocket frame from a client in a thread (blocking
sockets, so the client's own work does not count as the daemon's stall), or a whole daemon turn:
a WebSocket message whose scripted model answer calls a tool on the hostile page (web_fetch, the
masking, token counting and storing of its result), sends hostile tool arguments, or answers a
Telegram user with hostile Markdown that the channel converts. While each input is processed a
task in the daemon's loop asks to wake every 5 ms (its worst lateness is the stall every other
session would have felt) and a thread samples the process's RSS every 2 ms (peak minus the RSS
before = memory added). Targets: stall under 50 ms, memory under 50 MB. Each input runs
`--repeat` times (default 3) after one warm-up turn; the table shows the median stall and the
largest memory growth. The first long request of a daemon starts the token worker (a child process
that loads the tokenizer; once, whatever the input): that is a row of its own, measured once, so
the rows after it show what their input costs; its outcome shows the worker's own peak RSS.
`--only TEXT` runs the rows whose name contains TEXT (and the idle and token worker rows).
The recorded run and what changed it: docs/hostile_inputs.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import logging
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

from countbot.config.loader import load_settings  # noqa: E402
from countbot.config.settings import WebToolSettings  # noqa: E402
from countbot.llm.token_process import TokenProcess  # noqa: E402
from countbot.web.context import DaemonContext  # noqa: E402
from countbot.web.daemon import bind_listener, serve_daemon  # noqa: E402
from tests.channels.fake_telegram import FakeTelegram  # noqa: E402
from tests.channels.harness import ALICE, use_fake_telegram  # noqa: E402
from tests.support.loop_watch import LoopWatch  # noqa: E402
from tests.support.scripted_model import Reply, ScriptedModelServer  # noqa: E402
from tests.web.conftest import TOKEN, write_config  # noqa: E402
from tests.web_access.local_http import LocalHTTPServer  # noqa: E402
from tests.web_access.local_http import Reply as Page  # noqa: E402

STALL_TARGET_MS = 50.0
IDLE_ROW = "idle (baseline)"
TOKENIZER_ROW = "first long request: token worker starts"
MEMORY_TARGET_MB = 50.0
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE_SIZE


def peak_rss(pid: int | None) -> int:
    """The peak RSS of process `pid` (0 when it does not run)."""
    if pid is None:
        return 0
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


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


class _SendRace(logging.Filter):
    """Drops the one error the sync client logs for its own race, not the daemon's doing.

    When the daemon closes a connection (1009) while the client still sends a 3 MB frame, the
    sending thread closes the socket while the client's reading thread feeds it the close frame
    it just read; websockets then logs "unexpected internal error" (EOFError "stream ended") from
    that reading thread. The outcome column shows the close the daemon sent.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, EOFError) and str(error) == "stream ended")


CLIENT_LOG = logging.getLogger("bench.ws_client")
CLIENT_LOG.addFilter(_SendRace())


def ws_frames(port: int, frames: list[str]) -> str:
    """Blocking: send frames, each followed by a ping; what came back for the first one."""
    url = f"ws://127.0.0.1:{port}/ws?token={TOKEN}"
    with connect(url, max_size=None, proxy=None, logger=CLIENT_LOG) as ws:
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


def ws_turn(port: int, content: str) -> str:
    """Blocking: one turn over the WebSocket; the first tool result (or answer) it reported."""
    url = f"ws://127.0.0.1:{port}/ws?token={TOKEN}"
    with connect(url, max_size=None, proxy=None) as ws:
        ws.send(json.dumps({"type": "message", "session_id": None, "content": content}))
        said = ""
        while True:
            frame = json.loads(ws.recv(timeout=120))
            if frame["type"] == "tool_result" and not said:
                said = f"{frame['status']}: {frame['result'][:60]!r}"
            if frame["type"] in ("done", "error", "cancelled"):
                return (
                    said
                    or f"{frame['type']}: {str(frame.get('content') or frame.get('error'))[:50]}"
                )


@dataclass
class Bench:
    """What the cases talk to: the daemon's port, the model's script, pages, Telegram."""

    port: int
    model: ScriptedModelServer
    pages: LocalHTTPServer
    telegram: FakeTelegram
    folder: Path
    tokens: TokenProcess

    def first_count(self, path: str) -> Callable[[], Awaitable[str]]:
        """A web_fetch turn whose request needs token counts: the token worker starts and loads
        the tokenizer (the daemon's stall is the row's; the worker's memory is its own)."""
        fetch = self.fetch(path)

        async def run() -> str:
            outcome = await fetch()
            return f"worker peak {peak_rss(self.tokens.pid) / 1e6:.0f} MB; {outcome}"

        return run

    def turn(self, *replies: Reply, content: str = "go") -> Callable[[], Awaitable[str]]:
        """A WebSocket turn whose model answers with `replies` (then "fine")."""

        async def run() -> str:
            self.model.script(*replies, Reply.text("fine"))
            return await asyncio.to_thread(ws_turn, self.port, content)

        return run

    def fetch(self, path: str) -> Callable[[], Awaitable[str]]:
        """A turn whose model calls web_fetch on a page of the hostile server."""
        return self.turn(Reply.tool_calls(("web_fetch", json.dumps({"url": self.pages.url(path)}))))

    def telegram_answer(self, markdown: str) -> Callable[[], Awaitable[str]]:
        """A Telegram user asks; the model answers `markdown`, which the channel converts."""

        async def run() -> str:
            before = len(self.telegram.chat_messages(ALICE))
            self.model.script(Reply.text(markdown, chunks=1))
            self.telegram.user_says("hello")
            sent = await self.telegram.wait_for_messages(ALICE, before + 1)
            return f"sent {len(sent) - before} message(s), {len(sent[-1]):,} chars"

        return run

    def threaded(
        self, function: Callable[..., object], *args: object
    ) -> Callable[[], Awaitable[str]]:
        async def run() -> str:
            outcome = await asyncio.to_thread(function, *args)
            return outcome.decode() if isinstance(outcome, bytes) else str(outcome)

        return run

    def skill_turn(self, frontmatter: str) -> Callable[[], Awaitable[str]]:
        """A turn after a workspace skill's file changed to `frontmatter`: the turn reads it."""
        skill = self.folder / "workspace" / "skills" / "hostile" / "SKILL.md"

        async def run() -> str:
            skill.parent.mkdir(parents=True, exist_ok=True)
            skill.write_text(f"---\n{frontmatter}\n---\nbody\n{time.time_ns()}\n")
            return await self.turn()()

        return run


def cases(bench: Bench) -> list[tuple[str, Callable[[], Awaitable[str]]]]:
    login_head = (
        b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\n"
    )
    api_head = (
        f"POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Content-Type: application/json\r\n"
    ).encode()
    huge = "9" * 5000
    port = bench.port

    async def idle() -> str:
        await asyncio.sleep(0.5)
        return "nothing sent: the lateness a loaded machine adds by itself"

    return [
        (IDLE_ROW, idle),
        (TOKENIZER_ROW, bench.first_count("/long-text")),
        ("web_fetch: 120 KB of unclosed <title", bench.fetch("/unclosed-titles")),
        ("web_fetch: 156 KB of <html><title>", bench.fetch("/titles")),
        ("web_fetch: 2 MB of well-formed tags", bench.fetch("/tags")),
        ("web_fetch: 2 MB of empty comments", bench.fetch("/comments")),
        ("web_fetch: 2 MB of HTML in \u0130 (dotted I)", bench.fetch("/dotted-i")),
        ("web_fetch: gzip,gzip bomb (1 GiB)", bench.fetch("/gzip-bomb")),
        ("web_fetch: deflate bomb (512 MiB)", bench.fetch("/deflate-bomb")),
        ("web_fetch: 2 MB of secret-like tokens", bench.fetch("/secrets")),
        ("web_fetch: 2 MB utf-16, no BOM", bench.fetch("/utf16")),
        ("web_fetch: 2 MB declared as punycode", bench.fetch("/punycode")),
        (
            "tool arguments: 100 KB of {",
            bench.turn(Reply.tool_calls(("web_fetch", "{" * 100_000), chunk_size=4096)),
        ),
        (
            "tool arguments: 60 KB to repair",
            bench.turn(
                Reply.tool_calls(("web_fetch", "{'url': '" + "x" * 60_000 + "',}"), chunk_size=4096)
            ),
        ),
        (
            "exec: 64 KB command for the tripwire",
            bench.turn(
                Reply.tool_calls(
                    ("exec", json.dumps({"command": "echo " + "a'b\"c$(d) ; " * 5_000})),
                    chunk_size=4096,
                )
            ),
        ),
        ("skill frontmatter: deep nesting", bench.skill_turn("a: " + "[" * 10_000)),
        ("skill frontmatter: billion laughs", bench.skill_turn(billion_laughs())),
        ("telegram markup: answer of [", bench.telegram_answer("[" * 20_000)),
        ("telegram markup: answer of **a", bench.telegram_answer("**a " * 5_000)),
        ("telegram markup: answer of [a](", bench.telegram_answer("[a](" * 5_000)),
        (
            "POST /login, declared 200 MB",
            bench.threaded(raw_http, port, login_head + b"Content-Length: 209715200\r\n\r\n"),
        ),
        (
            "POST /login, 20 MB chunked",
            bench.threaded(
                raw_http,
                port,
                login_head + b"Transfer-Encoding: chunked\r\n\r\n",
                b"100000\r\n" + b"x" * 0x100000 + b"\r\n",
                20,
            ),
        ),
        (
            "POST /api/sessions, 50 MB JSON sent",
            bench.threaded(
                raw_http, port, api_head + b"Content-Length: 52428800\r\n\r\n", b"[" * (1 << 20), 50
            ),
        ),
        (
            "GET with a 64 MB header",
            bench.threaded(
                raw_http,
                port,
                b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ",
                b"a" * (1 << 20),
                64,
            ),
        ),
        (
            "WS: 5000-digit integer",
            bench.threaded(
                ws_frames, port, [f'{{"type": "subscribe", "session_id": "x", "last_seq": {huge}}}']
            ),
        ),
        ("WS: 100,000 nested [", bench.threaded(ws_frames, port, ["[" * 100_000])),
        (
            "WS: lone surrogates in a message",
            bench.threaded(
                ws_frames,
                port,
                ['{"type": "message", "session_id": null, "content": "a\\ud800b\\udfff"}'],
            ),
        ),
        ("WS: 1 MB message turn", bench.turn(content="token=abcdefgh " * 60_000)),
        ("WS: 1.5 MB frame (limit 1 MiB)", bench.threaded(ws_frames, port, [big_frame(3 << 19)])),
        (
            "WS: 3 MB frame (past the headroom)",
            bench.threaded(ws_frames, port, [big_frame(3 << 20)]),
        ),
    ]


async def measure(name: str, run: Callable[[], Awaitable[str]], repeat: int) -> Row:
    if name == TOKENIZER_ROW:
        repeat = 1  # a second run would load nothing
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
    """The daemon imports litellm in the background when its models need it; wait for that."""
    for _ in range(1800):
        if context.litellm_ready:
            return
        await asyncio.sleep(0.1)


def hostile_pages() -> dict[str, Page]:
    text = {"Content-Type": "text/plain"}
    html = {"Content-Type": "text/html; charset=utf-8"}
    return {
        "/long-text": Page(200, b"Tide tables for the week. " * 4_800, text),
        "/comments": Page(200, b"<!---->" * 285_000, html),
        "/dotted-i": Page(200, "<p>\u0130".encode() * 400_000, html),
        "/unclosed-titles": Page(
            200, b"<html>" + b"<title" * 20_000, {"Content-Type": "text/html"}
        ),
        "/titles": Page(200, b"<html><title>" * 12_000, {"Content-Type": "text/html"}),
        "/tags": Page(
            200,
            b"<html><body>" + b"<p><b>x</b> <a href='https://a.test/'>y</a></p>" * 40_000,
            {"Content-Type": "text/html"},
        ),
        "/gzip-bomb": Page(200, gzipped_twice(1 << 30), {**text, "Content-Encoding": "gzip, gzip"}),
        "/deflate-bomb": Page(
            200, zlib.compress(b"a" * (512 << 20), 9), {**text, "Content-Encoding": "deflate"}
        ),
        "/secrets": Page(200, (b"token=abcdefgh1234 sk-" + b"x" * 30 + b"\n") * 40_000, text),
        "/utf16": Page(
            200,
            "\u4f60\u597d".encode("utf-16-le") * 500_000,
            {"Content-Type": "text/plain; charset=utf-16"},
        ),
        "/punycode": Page(200, b"a" * 2_000_000, {"Content-Type": "text/plain; charset=punycode"}),
    }


async def run_all(repeat: int, only: str | None) -> list[Row]:
    telegram = FakeTelegram()
    await telegram.start()
    with (
        ScriptedModelServer() as model,
        LocalHTTPServer(hostile_pages()) as pages,
        tempfile.TemporaryDirectory() as tmp,
    ):
        folder = Path(tmp)
        settings = load_settings(write_config(folder, model, token=TOKEN))
        settings.tools.web = WebToolSettings(allow_private=True)
        use_fake_telegram(settings, telegram)
        model.default = Reply.text("fine")
        try:
            with bind_listener("127.0.0.1", 0) as listener:
                async with serve_daemon(settings, listener) as daemon:
                    await wait_for_litellm(daemon.context)
                    parts = await daemon.context.runtime.turn_parts()  # as a first turn would
                    tokens = parts.ports.loops.tokens
                    bench = Bench(daemon.port, model, pages, telegram, folder, tokens)
                    await bench.turn()()  # the first turn loads what turns load once
                    chosen = [
                        (name, run)
                        for name, run in cases(bench)
                        if only is None or only in name or name in (IDLE_ROW, TOKENIZER_ROW)
                    ]
                    return [await measure(name, run, repeat) for name, run in chosen]
        finally:
            await telegram.stop()


def print_table(rows: list[Row]) -> None:
    print(f"{'hostile input':40} {'stall ms':>9} {'mem MB':>7}  ok  outcome")
    for row in rows:
        stall = statistics.median(row.stalls_ms)
        memory = max(row.added_mb)
        ok = "yes" if stall < STALL_TARGET_MS and memory < MEMORY_TARGET_MB else "NO"
        print(f"{row.name:40} {stall:9.1f} {memory:7.1f}  {ok:3} {row.outcome}")
    print(
        "\nstall: median of the worst 5 ms-tick lateness per run (the token worker row: one run) "
        f"(target < {STALL_TARGET_MS:g} ms); the idle row is what the machine's load alone adds "
        f"(load average {os.getloadavg()[0]:.1f})"
    )
    print(f"mem: largest RSS growth over the run (target < {MEMORY_TARGET_MB:g} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", help="run only the rows whose name contains this text")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = asyncio.run(run_all(args.repeat, args.only))
    print_table(rows)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
