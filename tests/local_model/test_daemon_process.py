"""The built-in model's child server seen from a terminal: Ctrl-C stops the daemon and its child
without a "crashed, restarting" warning, choosing another model stops the child at once, and a
local model a chat picked stops once unused."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path

import httpx
import pytest
import websockets

from countbot.local_model.catalogue import DEFAULT_MODEL
from tests.local_model.conftest import MODEL_WAIT, local_config
from tests.support.scripted_model import ScriptedModelServer

pytest.importorskip("xllamacpp", reason="the local extra: pip install -e '.[local]'")

pytestmark = [pytest.mark.local_model, pytest.mark.timeout(400)]

START = 120.0  # a loaded 2-core machine imports and starts the daemon in tens of seconds


def children(pid: int) -> set[int]:
    """The process ids of the local model servers whose parent is `pid`.

    The daemon may have other children (the memory index's vector worker): only the model
    server, `countbot.local_model.server_main`, counts here.
    """
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                command = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            server = b"countbot.local_model.server_main" in command
            if server and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def start_daemon(config: Path) -> tuple[asyncio.subprocess.Process, str]:
    """`countbot run` as a shell starts a job: the leader of its own process group."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", NO_PROXY="*")
    env.pop("COUNTBOT_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "countbot", "run", "--config", str(config)),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), START)).decode()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    assert match, line
    return process, f"http://127.0.0.1:{match.group(1)}"


async def one_turn(config: Path) -> None:
    """`countbot chat -m` through the running daemon, which starts the model's child."""
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "countbot", "chat", "--config", str(config), "-m", "Hi"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), MODEL_WAIT)
    assert process.returncode == 0, err.decode()


async def test_ctrl_c_stops_the_daemon_and_its_model_without_a_crash_warning(
    tmp_path: Path, models_dir: Path
) -> None:
    config = local_config(tmp_path, models_dir)
    daemon, _ = await start_daemon(config)
    try:
        await one_turn(config)
        (child,) = children(daemon.pid)
        os.killpg(daemon.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        await asyncio.wait_for(daemon.wait(), START)
        assert daemon.stderr is not None
        said = (await daemon.stderr.read()).decode()
    finally:
        if daemon.returncode is None:
            daemon.kill()
            await daemon.wait()
    assert "exited with code" not in said and "restarting" not in said, said
    for _ in range(50):
        if not alive(child):
            break
        await asyncio.sleep(0.1)
    assert not alive(child)


async def test_choosing_another_model_in_settings_stops_the_local_one(
    tmp_path: Path, models_dir: Path
) -> None:
    config = local_config(tmp_path, models_dir)
    daemon, base = await start_daemon(config)
    try:
        await one_turn(config)
        (child,) = children(daemon.pid)
        async with httpx.AsyncClient(base_url=base, trust_env=False, timeout=60) as http:
            model = {"name": "openai/gpt-4o-mini", "api_base": "http://127.0.0.1:9/v1"}
            reply = await http.put("/api/settings", json={"model": model})
            assert reply.status_code == 200, reply.text
        assert not alive(child)
        assert children(daemon.pid) == set()
    finally:
        daemon.send_signal(signal.SIGTERM)
        await asyncio.wait_for(daemon.wait(), START)


async def test_a_local_model_one_chat_picked_stops_once_unused(
    tmp_path: Path, models_dir: Path, model_server: ScriptedModelServer
) -> None:
    """The configured model is remote; a chat picks the local one for a turn. Its child server
    then holds ~290 MB for nothing: it stops after `model.local.idle_stop` unused seconds."""
    config = local_config(
        tmp_path,
        models_dir,
        name="openai/test-model",
        api_base=model_server.base_url,
        api_key="sk-idle-test-0123456789",
        local={"threads": 1, "models_dir": str(models_dir), "idle_stop": 3},
    )
    daemon, base = await start_daemon(config)
    try:
        ws_url = base.replace("http://", "ws://") + "/ws"
        async with websockets.connect(ws_url, origin=base) as socket:
            message = {"type": "message", "session_id": "pick", "content": "Hi"}
            await socket.send(json.dumps({**message, "model": f"local/{DEFAULT_MODEL}"}))
            frame: dict = {}
            while frame.get("type") not in ("done", "error"):
                frame = json.loads(await asyncio.wait_for(socket.recv(), MODEL_WAIT))
            assert frame["type"] == "done", frame
        (child,) = children(daemon.pid)
        for _ in range(300):  # well past the 3 s: the watcher's own timing is not under test
            if not alive(child):
                break
            await asyncio.sleep(0.1)
        assert not alive(child) and children(daemon.pid) == set()
        assert model_server.requests == []  # the turn was the local model's
    finally:
        daemon.send_signal(signal.SIGTERM)
        await asyncio.wait_for(daemon.wait(), START)
