"""`countbot run` as a real process: refusals, one daemon per data folder, SIGTERM, `chat -m`."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

from countbot.config.loader import load_settings
from countbot.store.database import Database
from countbot.store.sessions import SessionStore
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import WAIT, WsClient, write_config

ENV = {**os.environ, "NO_PROXY": "*", "PYTHONUNBUFFERED": "1"}


@dataclass
class DaemonProcess:
    process: asyncio.subprocess.Process
    port: int

    async def ws(self) -> WsClient:
        url = f"ws://127.0.0.1:{self.port}/ws"
        return WsClient(await connect(url, proxy=None, max_size=None))

    def http(self) -> httpx.AsyncClient:
        base = f"http://127.0.0.1:{self.port}"
        return httpx.AsyncClient(base_url=base, trust_env=False, timeout=WAIT)

    async def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(self.process.wait(), WAIT)


async def countbot(*args: str) -> asyncio.subprocess.Process:
    """`countbot *args` as a terminal starts it, Ctrl-C meaning Ctrl-C: a shell starts a job it
    puts in the background with SIGINT ignored, children inherit that, and `chat` (as any Python
    program) then leaves it ignored, so a test run started so would see Ctrl-C do nothing."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "countbot",
            *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=ENV,
        )
    finally:
        signal.signal(signal.SIGINT, before)


async def finished(process: asyncio.subprocess.Process) -> tuple[int, str, str]:
    out, err = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def stored(config: Path, session: str) -> list[dict]:
    """The records of `session` in the store of the daemon `config` ran."""
    db = await Database.open(load_settings(config).data_dir / "countbot.db")
    try:
        return await SessionStore(db).messages(session, limit=50)
    finally:
        await db.close()


@contextlib.asynccontextmanager
async def running_daemon(config: Path) -> AsyncIterator[DaemonProcess]:
    process = await countbot("run", "--config", str(config))
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), WAIT)).decode()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, f"unexpected first line: {line!r}"
        yield DaemonProcess(process, int(match.group(1)))
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_a_public_address_without_a_token_refuses_before_binding(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    with socket.socket() as taken:  # if the daemon tried to bind, it would fail differently
        taken.bind(("0.0.0.0", 0))
        port = taken.getsockname()[1]
        config = write_config(tmp_path, model_server, host="0.0.0.0", port=port)
        code, _, err = await finished(await countbot("run", "--config", str(config)))
    assert code == 2
    assert "without an access token" in err and "web.token" in err
    assert not (tmp_path / "data" / "daemon.json").exists()


async def test_a_second_daemon_on_the_same_data_folder_refuses(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    async with running_daemon(config) as first:
        code, _, err = await finished(await countbot("run", "--config", str(config)))
        assert code == 1
        assert "already running" in err and str(first.process.pid) in err
        assert await first.stop() == 0


async def test_sigterm_cancels_a_turn_running_past_the_grace_and_keeps_history(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server, shutdown_grace=1)
    model_server.script(Reply.text("finished answer"), Reply.text("slow " * 20, chunks=20, delay=1))
    async with running_daemon(config) as daemon:
        client = await daemon.ws()
        await client.send({"type": "message", "session_id": "kept", "content": "first"})
        await client.until("done")
        await client.send({"type": "message", "session_id": "kept", "content": "second"})
        await client.until("stream", len(client.of("stream")) + 1)
        assert await daemon.stop() == 0
        with contextlib.suppress(Exception):
            await client.until("cancelled")
        said = (await daemon.process.stdout.read()).decode()  # type: ignore[union-attr]
    assert "letting 1 running turn finish (up to 1 s, then cancelled)" in said
    assert said.rstrip().endswith("CountBot stopped.")
    assert not (tmp_path / "data" / "daemon.json").exists()
    records = await stored(config, "kept")
    kinds = [(r["type"], r.get("content") or r.get("text")) for r in records]
    assert kinds[:3] == [("user", "first"), ("assistant", "finished answer"), ("user", "second")]
    assert kinds[-1] == ("note", "Cancelled.")


async def test_ctrl_c_on_an_idle_daemon_says_so_and_exits_0(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    async with running_daemon(config) as daemon:
        daemon.process.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(daemon.process.wait(), WAIT) == 0
        said = (await daemon.process.stdout.read()).decode()  # type: ignore[union-attr]
    assert said.splitlines() == ["CountBot is stopping…", "CountBot stopped."]


async def test_sigterm_lets_a_running_turn_finish_within_the_grace(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server, shutdown_grace=30)
    model_server.script(Reply.text("one two three four", chunks=4, delay=0.5))
    async with running_daemon(config) as daemon:
        client = await daemon.ws()
        await client.send({"type": "message", "session_id": "s", "content": "count"})
        await client.until("stream")
        assert await daemon.stop() == 0
        done = await client.until("done")
    assert done["content"] == "one two three four"
    records = await stored(config, "s")
    assert [r["type"] for r in records] == ["user", "assistant"]


async def test_chat_goes_through_the_running_daemon(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    async with running_daemon(config) as daemon:
        tab = await daemon.ws()
        await tab.send({"type": "message", "session_id": "cli:x", "content": "warm up"})
        await tab.until("done")
        model_server.script(Reply.text("answered by the daemon"))
        chat = ("chat", "--config", str(config), "-m", "hello daemon", "--session", "cli:x")
        code, out, err = await finished(await countbot(*chat))
        assert code == 0, err
        assert out.strip() == "answered by the daemon"
        # The open tab saw the message arrive: it went through the daemon's gateway.
        seen = await tab.until("user_message")
        assert seen["content"] == "hello daemon"
        assert (await tab.until("done", 2))["content"] == "answered by the daemon"
        assert await daemon.stop() == 0


async def test_interactive_chat_goes_through_the_running_daemon(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    async with running_daemon(config) as daemon:
        tab = await daemon.ws()
        await tab.send({"type": "message", "session_id": "cli:i", "content": "warm up"})
        await tab.until("done")
        model_server.script(
            Reply.tool_calls(("list_dir", '{"path": "."}')),
            Reply.text("streamed through the daemon", chunks=4),
        )
        prompt = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "countbot", "chat", "--config", str(config)),
            *("--session", "cli:i"),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=ENV,
        )
        out, err = await asyncio.wait_for(prompt.communicate(b"look around\nexit\n"), WAIT)
        assert prompt.returncode == 0, err
        assert "through the running daemon" in out.decode()
        assert "bot › streamed through the daemon" in out.decode()
        assert "list_dir" in err.decode()
        seen = await tab.until("user_message")
        assert seen["content"] == "look around"
        assert (await tab.until("done", 2))["content"] == "streamed through the daemon"
        assert await daemon.stop() == 0


async def test_ctrl_c_on_chat_message_cancels_the_turn_in_the_daemon(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    async with running_daemon(config) as daemon:
        tab = await daemon.ws()  # it follows the session it talked in
        await tab.send({"type": "message", "session_id": "cli:c", "content": "warm up"})
        await tab.until("done")
        model_server.script(Reply.text("word " * 60, chunks=60, delay=0.5))  # 30 s unless cut
        chat = ("chat", "--config", str(config), "-m", "talk long", "--session", "cli:c")
        process = await countbot(*chat)
        await tab.until("stream", len(tab.of("stream")) + 1)  # the daemon is answering it
        process.send_signal(signal.SIGINT)
        code, out, _ = await finished(process)
        assert (code, out.strip()) == (130, "(cancelled)")
        await tab.until("cancelled")  # the daemon stopped the turn, not only the client
        assert await daemon.stop() == 0
    records = await stored(config, "cli:c")
    kinds = [(r["type"], r.get("content") or r.get("text")) for r in records]
    assert kinds[2] == ("user", "talk long") and kinds[-1] == ("note", "Cancelled.")
    assert all("word " * 60 not in str(text) for _, text in kinds)


async def test_chat_runs_in_process_when_no_daemon_runs(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    model_server.script(Reply.text("answered in process"))
    code, out, err = await finished(await countbot("chat", "--config", str(config), "-m", "hi"))
    assert code == 0, err
    assert out.strip() == "answered in process"


async def test_a_switched_off_skill_stays_off_after_a_restart(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    offered = "- summarize: Summarize a web page"

    async def system_prompt(daemon: DaemonProcess) -> str:
        client = await daemon.ws()
        await client.send({"type": "message", "session_id": None, "content": "hi"})
        await client.until("done")
        await client.close()
        return model_server.requests[-1]["messages"][0]["content"]

    async with running_daemon(config) as daemon:
        assert offered in await system_prompt(daemon)
        async with daemon.http() as http:
            off = await http.put("/api/skills/summarize", json={"enabled": False})
        assert off.status_code == 200 and off.json()["enabled"] is False
        assert await daemon.stop() == 0
    assert load_settings(config).skills.disabled == ["summarize"]

    async with running_daemon(config) as daemon:
        async with daemon.http() as http:
            listed = {s["name"]: s for s in (await http.get("/api/skills")).json()["skills"]}
            assert listed["summarize"]["enabled"] is False and listed["weather"]["enabled"]
            assert offered not in await system_prompt(daemon)
            on = await http.put("/api/skills/summarize", json={"enabled": True})
            assert on.status_code == 200 and on.json()["enabled"] is True
        assert await daemon.stop() == 0
    assert load_settings(config).skills.disabled == []
