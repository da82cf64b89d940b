"""`countbot subagents list|cancel` as a user runs it: a subprocess asking a real daemon."""

from __future__ import annotations

import json
import os
from pathlib import Path

from countbot.web.instance import INFO_FILE
from tests.cli.process import countbot
from tests.subagents.script import Conversations, spawn, subagent_daemon
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon, write_config


def _publish(daemon: Daemon) -> None:
    """What `countbot run` writes once it listens, so the CLI finds this in-process daemon."""
    info = {"pid": os.getpid(), "host": "127.0.0.1", "port": daemon.port, "started_at": 0}
    (daemon.settings.data_dir / INFO_FILE).write_text(json.dumps(info))


async def test_list_and_cancel_a_running_subagent(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Watch the kettle", "kettle")), Reply.text("Ok.")])
    conv.subagent("kettle", Reply.hang(30))
    model_server.responder = conv
    config = tmp_path / "config.yaml"
    async with subagent_daemon(tmp_path, model_server) as daemon:
        client = await daemon.ws()
        await client.send({"type": "message", "session_id": "s1", "content": "Watch it"})
        while not any(f["type"] == "subagent" and f["status"] == "running" for f in client.frames):
            await client.recv()
        subagent_id = client.of("subagent")[0]["id"]
        _publish(daemon)
        status, out, err = await countbot("subagents", "list", "--active", config=config)
        assert status == 0, err
        assert subagent_id in out and "running" in out and "kettle" in out and "(from s1)" in out
        status, out, err = await countbot("subagents", "cancel", subagent_id, config=config)
        assert status == 0 and f"Cancelled subagent {subagent_id}." in out, err
        await client.until("done", 2)
        assert client.of("done")[-1]["content"] == "Relayed: kettle"
        status, _, err = await countbot("subagents", "cancel", subagent_id, config=config)
        assert status == 1 and "already ended (cancelled)" in err
        status, _, err = await countbot("subagents", "cancel", "nope", config=config)
        assert status == 1 and "no subagent 'nope'" in err
        await client.close()


async def test_without_a_daemon_the_cli_says_so(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    status, _, err = await countbot("subagents", "list", config=config)
    assert status == 1 and "no daemon is running" in err
