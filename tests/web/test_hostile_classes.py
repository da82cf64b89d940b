"""Classes of hostile input, each tried through a real daemon the way it would arrive in use.

A scripted model turn fetches pages (addresses that hide a private IPv4 inside IPv6, charsets
whose codecs fail their own way) and runs commands past the tripwire; clients call the settings
API and the daemon on other loopback addresses; `countbot run` is started on bad configs.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from countbot.config.loader import load_settings
from countbot.config.settings import WebToolSettings
from countbot.web.daemon import bind_listener, serve_daemon
from tests.support.loop_watch import RESPONSIVE, LoopWatch
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon, WsClient, write_config
from tests.web_access.local_http import LocalHTTPServer
from tests.web_access.local_http import Reply as Page

ROOT = Path(__file__).resolve().parents[2]


async def turn_results(
    daemon: Daemon, model: ScriptedModelServer, *calls: tuple[str, dict]
) -> list[dict]:
    """One WebSocket turn whose model makes `calls` at once; the tool results, in call order."""
    model.script(
        Reply.tool_calls(*((name, json.dumps(args)) for name, args in calls)), Reply.text("ok")
    )
    client: WsClient = await daemon.ws()
    await client.send({"type": "message", "session_id": None, "content": "go"})
    assert (await client.until("done"))["content"] == "ok"
    await client.close()
    starts = [frame["tool_call_id"] for frame in client.of("tool_start")]
    results = {frame["tool_call_id"]: frame for frame in client.of("tool_result")}
    return [results[call_id] for call_id in starts]


@pytest.mark.parametrize(
    ("address", "inside"),
    [
        ("64:ff9b::a9fe:a9fe", "169.254.169.254"),  # NAT64, well-known prefix
        ("64:ff9b::7f00:1", "127.0.0.1"),
        ("2002:c0a8:101::1", "192.168.1.1"),  # 6to4
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "10.0.0.1"),  # Teredo, client obfuscated
        ("::ffff:169.254.169.254", "169.254.169.254"),  # IPv4-mapped
        ("::10.1.2.3", "10.1.2.3"),  # IPv4-compatible
    ],
)
async def test_ipv6_transition_addresses_hiding_private_ipv4_are_not_fetched(
    daemon: Daemon, model_server: ScriptedModelServer, address: str, inside: str
) -> None:
    (result,) = await turn_results(
        daemon, model_server, ("web_fetch", {"url": f"http://[{address}]/latest/meta-data/"})
    )
    assert result["status"] == "error"
    assert "refused" in result["result"] and f"embeds {inside}" in result["result"]


async def test_local_use_nat64_is_not_fetched_whatever_it_embeds(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    (result,) = await turn_results(
        daemon, model_server, ("web_fetch", {"url": "http://[64:ff9b:1::808:808]/"})
    )
    assert result["status"] == "error" and "local-use NAT64" in result["result"]


@pytest.fixture
def pages() -> Iterator[LocalHTTPServer]:
    text = "Tide tables: high water at 06:12"
    routes = {
        f"/{name}": Page(200, text.encode(), {"Content-Type": f"text/plain; charset={name}"})
        # utf-32 raises without a byte order mark (utf-16 is read in the order its bytes show,
        # tests/web_access/test_web_fetch.py).
        for name in ("rot13", "base64", "zlib", "idna", "undefined", "punycode", "utf-32")
    }
    with LocalHTTPServer(routes) as server:
        yield server


@contextlib.asynccontextmanager
async def daemon_fetching_loopback(folder: Path, model: ScriptedModelServer) -> AsyncIterator:
    """A daemon whose web_fetch may reach the loopback test pages."""
    settings = load_settings(write_config(folder, model))
    settings.tools.web = WebToolSettings(allow_private=True)
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            yield Daemon(running.port, running.context, settings)


async def test_a_declared_charset_whose_codec_fails_its_own_way_reads_as_utf8(
    tmp_path: Path, model_server: ScriptedModelServer, pages: LocalHTTPServer
) -> None:
    names = sorted(route.strip("/") for route in pages.routes)
    async with daemon_fetching_loopback(tmp_path, model_server) as daemon:
        results = await turn_results(
            daemon, model_server, *(("web_fetch", {"url": pages.url(f"/{n}")}) for n in names)
        )
        for name, result in zip(names, results, strict=True):
            assert result["status"] == "ok", (name, result["result"])
            assert "Tide tables: high water at 06:12" in result["result"], name
        async with daemon.http() as http:
            assert (await http.get("/api/health")).status_code == 200


async def test_pages_that_were_one_long_step_keep_the_daemon_loop_responsive(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    # Cutting out 285,000 empty comments was one step (1.5 s on a loaded machine); 2 MB of
    # "İ" was lowercased whole, twice, and its 800,000 output parts held 65 MB.
    html = {"Content-Type": "text/html; charset=utf-8"}
    routes = {
        "/comments": Page(200, b"<!---->" * 285_000 + b"<p>after the comments", html),
        "/dotted-i": Page(200, "<p>İ".encode() * 399_000, html),
    }
    with LocalHTTPServer(routes) as server:
        async with (
            daemon_fetching_loopback(tmp_path, model_server) as daemon,
            LoopWatch() as watch,
        ):
            comments, dotted = await turn_results(
                daemon,
                model_server,
                ("web_fetch", {"url": server.url("/comments")}),
                ("web_fetch", {"url": server.url("/dotted-i")}),
            )
    assert comments["result"].endswith("after the comments")
    assert dotted["status"] == "ok" and "İ\n\nİ" in dotted["result"]
    assert watch.worst < RESPONSIVE, watch.describe()


async def test_the_settings_api_refuses_a_value_of_the_wrong_type(daemon: Daemon) -> None:
    config = daemon.settings.config_path
    assert config is not None
    before = config.read_text()
    async with daemon.http() as http:
        for change, field in [
            ({"max_tokens": "4096"}, "model.max_tokens"),
            ({"vision": "yes"}, "model.vision"),
            ({"temperature": [0.5]}, "model.temperature"),
            ({"max_tokens": True}, "model.max_tokens"),
        ]:
            response = await http.put("/api/settings", json={"model": change})
            assert response.status_code == 400, change
            assert field in response.json()["error"]
        assert config.read_text() == before  # nothing was saved
        fine = await http.put("/api/settings", json={"model": {"max_tokens": 2048}})
        assert fine.status_code == 200 and fine.json()["model"]["max_tokens"] == 2048


@pytest.mark.parametrize(
    ("bind", "host_header"),
    [
        ("127.0.0.2", "127.0.0.2"),
        ("127.45.6.7", "127.45.6.7"),
        ("::1", "[0:0:0:0:0:0:0:1]"),  # the same address, spelled out
        ("127.0.0.1", "LOCALHOST."),
    ],
)
async def test_a_daemon_on_any_loopback_address_accepts_its_own_address_as_host(
    tmp_path: Path, model_server: ScriptedModelServer, bind: str, host_header: str
) -> None:
    settings = load_settings(write_config(tmp_path, model_server, host=bind))
    with bind_listener(bind, 0) as listener:
        async with serve_daemon(settings, listener) as running:
            shown = f"[{bind}]" if ":" in bind else bind
            url = f"http://{shown}:{running.port}"
            async with httpx.AsyncClient(base_url=url, trust_env=False, timeout=20) as http:
                own = await http.get("/api/health", headers={"Host": f"{host_header}:1"})
                assert own.status_code == 200, own.text
                other = await http.get("/api/health", headers={"Host": "rebind.example:1"})
                assert other.status_code == 403


def countbot_run(folder: Path, config: dict) -> subprocess.CompletedProcess[str]:
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config, width=10_000))
    return subprocess.run(
        [sys.executable, "-m", "countbot", "run", "--config", str(path)],
        cwd=folder,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(folder)},
        capture_output=True,
        text=True,
        timeout=60,
    )


BASE = {
    "model": {"name": "openai/test", "api_base": "http://127.0.0.1:9/v1", "api_key": "sk-x"},
    "workspace": "workspace",
    "data_dir": "data",
    "web": {"host": "127.0.0.1", "port": 0},
}


def test_an_oversized_config_value_is_named_by_its_field(tmp_path: Path) -> None:
    config = json.loads(json.dumps(BASE))
    config["model"]["max_tokens"] = int("9" * 200)
    ran = countbot_run(tmp_path, config)
    assert ran.returncode == 2
    assert "`model.max_tokens`" in ran.stderr and "200 digits" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_a_data_dir_that_cannot_be_created_is_a_config_error(tmp_path: Path) -> None:
    ran = countbot_run(tmp_path, {**BASE, "data_dir": "/proc/countbot-data"})
    assert ran.returncode == 2
    assert "`data_dir` (/proc/countbot-data) cannot be created" in ran.stderr
    assert "Traceback" not in ran.stderr


async def test_the_tripwire_lets_mentions_and_signals_through_and_folds_look_alikes(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    harmless = (
        "grep -c sysrq-trigger /dev/null; grep -n /proc/sysrq-trigger /dev/null; "
        'echo "HISTFILE=/dev/null"; kill -1 4194304 2>/dev/null; echo signal-tried'
    )
    # One command per turn: after a command's output the next one would ask first (data flow).
    ran, wide, hidden = [
        (await turn_results(daemon, model_server, ("exec", {"command": command})))[0]["result"]
        for command in (
            harmless,
            "\uff53\uff55\uff44\uff4f ls",  # full-width "sudo"
            "r\u200bm -rf ~",  # a zero-width space inside "rm"
        )
    ]
    assert "signal-tried" in ran and "HISTFILE=/dev/null" in ran
    assert "privilege escalation" in wide
    assert "recursive delete" in hidden
