"""An `mcpServers` file imported with the CLI, then a daemon whose model calls the MCP tool."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from click.testing import CliRunner

from countbot.cli import main
from countbot.config.loader import load_settings
from countbot.web.daemon import bind_listener, serve_daemon
from tests.channels.fake_telegram import FakeTelegram
from tests.channels.harness import ALICE, use_fake_telegram
from tests.skills.formats import clawdbot_skill
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import example_copy
from tests.web.conftest import Daemon, write_config

ROOT = Path(__file__).resolve().parents[2]


def claude_desktop_file(folder: Path) -> Path:
    """The shape Claude Desktop's claude_desktop_config.json has."""
    data = {
        "mcpServers": {
            "notes": {
                "command": sys.executable,
                "args": ["-m", "tests.support.mcp_server", "stdio"],
                "env": {"PYTHONPATH": str(ROOT)},
            },
            "old-sse": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
        }
    }
    path = folder / "claude_desktop_config.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_import_writes_the_servers_and_keeps_the_config_valid(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    config.write_text("# my settings\n" + config.read_text(), encoding="utf-8")
    args = ["mcp", "import", str(claude_desktop_file(tmp_path)), "--config", str(config)]
    answered_no = CliRunner().invoke(main, args, input="n\n")
    assert answered_no.exit_code == 1 and "mcp" not in load_settings(config).mcp.servers
    result = CliRunner().invoke(main, [*args, "--yes"])
    assert result.exit_code == 0, result.output
    assert "notes: stdio" in result.output and "env: PYTHONPATH" in result.output
    assert "old-sse: left out" in result.output
    settings = load_settings(config)
    assert list(settings.mcp.servers) == ["notes"]
    assert settings.mcp.servers["notes"].env["PYTHONPATH"].get_secret_value() == str(ROOT)
    assert config.read_text(encoding="utf-8").startswith("# my settings\n")


async def test_a_turn_calls_an_imported_mcp_tool_and_the_model_sees_its_image(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    result = CliRunner().invoke(
        main,
        ["mcp", "import", str(claude_desktop_file(tmp_path)), "--yes", "--config", str(config)],
    )
    assert result.exit_code == 0, result.output
    settings = load_settings(config)
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            daemon = Daemon(running.port, running.context, settings)
            await _wait_ready(daemon, "notes")
            model_server.script(
                Reply.tool_calls(("notes__picture", "{}")), Reply.text("A red pixel.")
            )
            client = await daemon.ws()
            await client.send({"type": "message", "session_id": "mcp", "content": "show me"})
            done = await client.until("done")
            [tool_result] = client.of("tool_result")
            await client.close()
    assert done["content"] == "A red pixel."
    assert tool_result["status"] == "ok" and "a red pixel" in tool_result["result"]
    assert '<external source="mcp:notes/picture">' in tool_result["result"]
    offered = {tool["function"]["name"] for tool in model_server.requests[0]["tools"]}
    assert "notes__echo" in offered
    follow_up = model_server.requests[1]["messages"]
    images = [
        part
        for message in follow_up
        if message["role"] == "user" and isinstance(message["content"], list)
        for part in message["content"]
        if part["type"] == "image_url"
    ]
    assert images and images[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert follow_up[-2]["role"] == "tool" and follow_up[-1]["role"] == "user"


async def _wait_ready(daemon: Daemon, name: str) -> None:
    async with daemon.http() as http:
        for _ in range(600):
            [server] = (await http.get("/api/mcp")).json()["servers"]
            if server["state"] == "ready":
                return
            await asyncio.sleep(0.05)
    raise AssertionError(f"{name} did not connect: {server}")


async def test_telegram_chat_uses_the_mcp_tool_and_a_slash_skill(
    tmp_path: Path, model_server: ScriptedModelServer, fake_telegram: FakeTelegram
) -> None:
    config = write_config(tmp_path, model_server)
    args = ["mcp", "import", str(claude_desktop_file(tmp_path)), "--yes", "--config", str(config)]
    assert CliRunner().invoke(main, args).exit_code == 0
    settings = load_settings(config)
    use_fake_telegram(settings, fake_telegram)
    clawdbot_skill(settings.workspace / "skills")
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            await _wait_ready(Daemon(running.port, running.context, settings), "notes")
            model_server.script(
                Reply.tool_calls(("notes__add", '{"a": 20, "b": 22}')), Reply.text("It is 42.")
            )
            fake_telegram.user_says("what is 20 + 22? use the notes server")
            assert (await fake_telegram.wait_for_messages(ALICE))[-1] == "It is 42."
            model_server.script(Reply.text("Drafted."))
            fake_telegram.user_says("/release-notes for v2")
            assert (await fake_telegram.wait_for_messages(ALICE, 2))[-1] == "Drafted."
    tool_message = model_server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "42" in tool_message["content"]
    skill_turn = model_server.requests[2]["messages"][-1]["content"]
    assert "Sign with ~RN~" in skill_turn and skill_turn.rstrip().endswith("for v2")


def test_import_into_the_shipped_config_keeps_its_comments(tmp_path: Path) -> None:
    config = example_copy(tmp_path)
    shipped = config.read_text(encoding="utf-8")
    args = ["mcp", "import", str(claude_desktop_file(tmp_path)), "--yes", "--config", str(config)]
    assert CliRunner().invoke(main, args).exit_code == 0
    text = config.read_text(encoding="utf-8")

    def comment_lines(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.lstrip().startswith("#")]

    assert comment_lines(text) == comment_lines(shipped)  # only `servers: {}` was replaced
    assert list(load_settings(config).mcp.servers) == ["notes"]


async def test_without_a_sandbox_a_stdio_server_starts_once_the_user_approves_it(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    args = ["mcp", "import", str(claude_desktop_file(tmp_path)), "--yes", "--config", str(config)]
    assert CliRunner().invoke(main, args).exit_code == 0
    settings = load_settings(config)
    settings.tools.exec.sandbox = "off"
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            daemon = Daemon(running.port, running.context, settings)
            async with daemon.http() as http:
                [server] = (await http.get("/api/mcp")).json()["servers"]
            assert server["state"] == "awaiting approval" and server["tools"] == []
            model_server.script(
                Reply.tool_calls(("mcp_start_server", '{"server": "notes"}')),
                Reply.tool_calls(("notes__add", '{"a": 20, "b": 22}')),
                Reply.text("It is 42."),
            )
            client = await daemon.ws()
            await client.send({"type": "message", "session_id": "mcp", "content": "add them"})
            question = await client.until("approval_request")
            assert "notes" in question["summary"] and "sandbox" in question["reason"]
            answer = {"type": "approval_response", "id": question["id"], "decision": "once"}
            await client.send(answer)
            done = await client.until("done")
            started, added = client.of("tool_result")
            await client.close()
    assert done["content"] == "It is 42."
    assert started["status"] == "ok" and "notes__add" in started["result"]
    assert added["status"] == "ok" and "42" in added["result"]


async def test_a_server_is_tested_added_switched_off_and_removed_over_the_api(
    daemon: Daemon,
) -> None:
    """What the Skills page's MCP section does, against the running daemon and its config file:
    each change is written to config.yaml and followed at once, with no restart."""
    server = {
        "command": sys.executable,
        "args": ["-m", "tests.support.mcp_server", "stdio"],
        "env": {"PYTHONPATH": str(ROOT)},
    }
    config = daemon.settings.config_path
    assert config is not None
    async with daemon.http() as http:
        tested = (await http.post("/api/mcp/test", json={"name": "notes", **server})).json()
        assert tested["state"] == "ready" and "notes__echo" in tested["tools"]
        broken = {"name": "gone", "command": str(config.parent / "no-such-server")}
        failed = (await http.post("/api/mcp/test", json=broken)).json()
        assert failed["state"] != "ready" and failed["last_error"]
        assert "mcp" not in config.read_text(encoding="utf-8")  # a test adds nothing

        bad = await http.post("/api/mcp/servers", json={"name": "x", "url": "u", **server})
        assert bad.status_code == 400 and "exactly one of `command`" in bad.json()["error"]
        added = await http.post("/api/mcp/servers", json={"name": "notes", **server})
        assert added.status_code == 201, added.text
        await _wait_ready(daemon, "notes")
        assert daemon.context.runtime.tools.get("notes__echo") is not None
        # Its env value is a secret: in secrets.yaml, referenced from config.yaml.
        assert str(ROOT) not in config.read_text(encoding="utf-8")
        again = await http.post("/api/mcp/servers", json={"name": "notes", **server})
        assert again.status_code == 409

        off = await http.patch("/api/mcp/servers/notes", json={"enabled": False})
        [row] = off.json()["servers"]
        assert (row["state"], row["tools"]) == ("disabled", [])
        assert daemon.context.runtime.tools.get("notes__echo") is None

        gone = await http.delete("/api/mcp/servers/notes")
        assert gone.json()["servers"] == []
        assert "notes" not in load_settings(config).mcp.servers
        assert str(ROOT) not in (config.parent / "secrets.yaml").read_text(encoding="utf-8")
        assert (await http.delete("/api/mcp/servers/notes")).status_code == 404
