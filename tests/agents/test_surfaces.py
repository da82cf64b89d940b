"""The agents as the owner meets them outside the chats: `countbot chat --agent` and
`countbot doctor`, as real subprocesses over a real config."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.agents.conftest import agents_config, answer_as_agent, seed_houses
from tests.cli.process import countbot
from tests.support.scripted_model import ScriptedModelServer
from tests.web.conftest import write_config


@pytest.fixture
def config(tmp_path: Path, model_server: ScriptedModelServer) -> Path:
    """The three agents' config (no daemon running), and a fourth whose house cannot open."""
    path = write_config(tmp_path, model_server)
    data = yaml.safe_load(path.read_text())
    data["agents"] = agents_config(tmp_path)
    (tmp_path / "a-file").write_text("not a folder")
    data["agents"]["others"]["broken"] = {"workspace": str(tmp_path / "a-file" / "ws")}
    data["memory"] = {"embeddings": "off"}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    seed_houses(tmp_path, tmp_path)
    model_server.responder = answer_as_agent
    return path


async def test_chat_talks_to_the_named_agent_and_refuses_what_cannot_answer(
    config: Path,
) -> None:
    code, out, err = await countbot("chat", "-m", "hello", "--agent", "family", config=config)
    assert (code, out.strip()) == (0, "answered by family"), err
    code, out, err = await countbot("chat", "-m", "hello", "--agent", "nobody", config=config)
    assert code == 2 and "'nobody' is not configured" in err
    code, out, err = await countbot("chat", "-m", "hello", "--agent", "old", config=config)
    assert code == 2 and "'old' is switched off" in err
    # Family's conversation is not main's to continue.
    code, out, err = await countbot(
        "chat", "-m", "hello", "--session", "family@cli:default", config=config
    )
    assert code == 1 and "belongs to the assistant 'family'" in err


async def test_doctor_lists_the_agents_their_houses_and_bindings(config: Path) -> None:
    code, out, _ = await countbot("doctor", config=config)
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("✗ agents:"))
    assert lines[head] == "✗ agents: broken cannot start"
    shown = {line.split(":")[0].strip(): line for line in lines[head + 1 : head + 6]}
    assert shown["main"].endswith("bound to: every unbound message")
    assert "house opens" in shown["family"]
    assert "bound to: channel telegram sender 300, channel telegram chat 301" in shown["family"]
    assert "switched off; bound to: channel telegram chat 400" in shown["old"]
    assert "fails to start" in shown["broken"] and "bound to: nothing" in shown["broken"]
    assert code == 1
