"""Approval questions at the terminal: `countbot chat` as a real subprocess, answered on stdin."""

from __future__ import annotations

import asyncio
import json
import os
import pty
from pathlib import Path

import yaml

from tests.cli.test_chat import COUNTBOT, run, write_config
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import write_config as web_config
from tests.web.test_daemon import running_daemon

COMMAND = "echo from-the-terminal > proof.txt"
ASKING = "tools:\n  exec:\n    approval: always\n"


def script_exec(server: ScriptedModelServer, answer: str = "Done.") -> None:
    server.script(Reply.tool_calls(("exec", json.dumps({"command": COMMAND}))), Reply.text(answer))


def audit_lines(tmp_path: Path) -> list[dict]:
    lines = (tmp_path / "state" / "audit.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("type") == "approval"]


def test_yes_at_the_prompt_runs_the_command(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    write_config(tmp_path, model_server, ASKING)
    script_exec(model_server)
    result = run("chat", cwd=tmp_path, stdin="write the proof\ny\nexit\n")
    assert result.returncode == 0, result.stderr
    assert "exec needs your approval (tools.exec.approval is 'always')" in result.stderr
    assert COMMAND in result.stderr and "Allow? [y]es once / [a]lways / [N]o" in result.stdout
    assert "Done." in result.stdout
    assert (tmp_path / "ws" / "proof.txt").read_text() == "from-the-terminal\n"
    [record] = audit_lines(tmp_path)
    assert (record["decision"], record["answered_by"], record["channel"]) == ("once", "cli", "cli")


def test_anything_but_yes_is_no(tmp_path: Path, model_server: ScriptedModelServer) -> None:
    write_config(tmp_path, model_server, ASKING)
    script_exec(model_server, "I did not run it.")
    result = run("chat", cwd=tmp_path, stdin="write the proof\nsure\nexit\n")
    assert result.returncode == 0, result.stderr
    assert "I did not run it." in result.stdout
    assert not (tmp_path / "ws" / "proof.txt").exists()
    assert [r["decision"] for r in audit_lines(tmp_path)] == ["deny"]


def test_always_is_remembered_by_the_next_process(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    write_config(tmp_path, model_server, ASKING)
    script_exec(model_server)
    assert run("chat", cwd=tmp_path, stdin="write the proof\na\nexit\n").returncode == 0
    (tmp_path / "ws" / "proof.txt").unlink()

    script_exec(model_server, "Again.")
    result = run("chat", "-m", "write it again", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "needs your approval" not in result.stderr
    assert (tmp_path / "ws" / "proof.txt").exists()
    assert [r["outcome"] for r in audit_lines(tmp_path)] == ["answered", "remembered"]


def test_a_message_from_a_script_is_denied_at_once(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    write_config(tmp_path, model_server, ASKING)
    script_exec(model_server, "Could not run it.")
    # 90 s: room for a loaded machine, still below the 120 s a question would wait.
    result = run("chat", "-m", "write the proof", cwd=tmp_path, stdin="y\n", timeout=90)
    assert result.returncode == 0, result.stderr
    assert "Denied: no terminal to ask" in result.stderr
    assert "Could not run it." in result.stdout
    assert not (tmp_path / "ws" / "proof.txt").exists()
    [record] = audit_lines(tmp_path)
    assert (record["decision"], record["answered_by"]) == ("deny", "cli:no-terminal")


async def test_chat_through_the_daemon_asks_at_the_terminal(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    """`chat -m` on a terminal (a pty here) while the daemon runs: the daemon's question is
    asked at the terminal, and the open web tab sees who answered."""
    config = web_config(tmp_path, model_server, host="127.0.0.1", port=0)
    data = yaml.safe_load(config.read_text())
    config.write_text(yaml.safe_dump({**data, "tools": {"exec": {"approval": "always"}}}))
    async with running_daemon(config) as daemon:
        tab = await daemon.ws()
        model_server.script(Reply.text("warm"))
        await tab.send({"type": "message", "session_id": "cli:x", "content": "warm up"})
        await tab.until("done")
        script_exec(model_server, "Written through the daemon.")
        controller, terminal = pty.openpty()
        try:
            chat = await asyncio.create_subprocess_exec(
                *COUNTBOT,
                *("chat", "--config", str(config), "-m", "write it", "--session", "cli:x"),
                stdin=terminal,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={**os.environ, "NO_PROXY": "*"},
            )
            asked = await tab.until("approval_request")
            assert asked["summary"] == COMMAND
            os.write(controller, b"y\n")
            out, err = await asyncio.wait_for(chat.communicate(), 60)
        finally:
            os.close(controller)
            os.close(terminal)
        assert chat.returncode == 0, err.decode()
        assert "Written through the daemon." in out.decode()
        settled = await tab.until("approval_settled")
        assert (settled["decision"], settled["by"]) == ("once", "cli")
        assert (tmp_path / "workspace" / "proof.txt").read_text() == "from-the-terminal\n"
        assert await daemon.stop() == 0
