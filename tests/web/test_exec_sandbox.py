"""exec in a real daemon runs in the sandbox, end to end: a scripted model turn calls it."""

from __future__ import annotations

import json

import pytest

from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon

CANARY = "daemon-env-canary-5d2e71"


async def test_exec_called_by_the_model_runs_in_the_sandbox(
    daemon: Daemon, model_server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COUNTBOT_E2E_CANARY", CANARY)
    command = (
        "echo made > proof.txt; cat /proc/1/comm; "
        f"cat {daemon.settings.config_path} 2>&1 | head -c 200; "
        'touch /usr/escaped 2>&1; echo "[$COUNTBOT_E2E_CANARY]"'
    )
    model_server.script(
        Reply.tool_calls(("exec", json.dumps({"command": command}))), Reply.text("Ran it.")
    )
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": "sandboxed", "content": "run it"})
    done = await client.until("done")
    result = client.of("tool_result")[0]
    assert done["content"] == "Ran it." and result["status"] == "ok"
    output = result["result"]
    # pid 1 of the sandbox's own PID namespace is bwrap; the daemon's processes are not there.
    assert output.startswith("exit code 0\nbwrap\n")
    assert "api_key" not in output and "Read-only file system" in output
    assert "[]" in output and CANARY not in output
    assert (daemon.settings.workspace / "proof.txt").read_text() == "made\n"
    await client.close()


async def test_the_settings_api_says_whether_exec_is_sandboxed(daemon: Daemon) -> None:
    async with daemon.http() as http:
        shown = (await http.get("/api/settings")).json()
    assert shown["sandbox"]["mode"] == "auto"
    assert shown["sandbox"]["active"] is True, shown["sandbox"]
    assert "bubblewrap" in shown["sandbox"]["detail"]
