"""Three agents in one real daemon, each with its own canaries, talking to the fake Telegram
server and the scripted model; the model answers as whichever agent its request came from."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from countbot.config.loader import load_settings
from countbot.web.daemon import bind_listener, serve_daemon
from tests.channels.fake_telegram import FakeTelegram
from tests.channels.harness import use_fake_telegram
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon, write_config

AGENTS = ("main", "work", "family")
KINDS = ("memory", "user", "secret", "skill", "file")
# Telegram users and chats; each private chat's id is its user's id.
OWNER, COLLEAGUE, CHILD, GRANDMA, STRANGER_IN_OLD = 100, 200, 300, 301, 400
WORK_GROUP = -1001
ALLOWED = (OWNER, COLLEAGUE, CHILD, GRANDMA, STRANGER_IN_OLD)
_CANARY = re.compile(r"canary-([a-z]+)-([a-z]+)")


def canary(agent: str, kind: str) -> str:
    return f"canary-{agent}-{kind}"


def canaries_in(text: str) -> set[tuple[str, str]]:
    """Every (agent, kind) canary in `text`."""
    return {(m.group(1), m.group(2)) for m in _CANARY.finditer(text)}


def expected_agent(channel: str, chat: int | None, sender: int | None) -> str:
    """The test's own reading of the bindings below (an oracle, not the code under test)."""
    if channel == "telegram" and sender == CHILD:
        return "family"
    if channel == "telegram" and chat == WORK_GROUP:
        return "work"
    if channel == "telegram" and chat == GRANDMA:
        return "family"
    if channel == "telegram" and chat == STRANGER_IN_OLD:
        return "old"
    return "main"


def agents_config(houses: Path) -> dict[str, Any]:
    """`agents:` with their workspaces in `houses`: work and family, old switched off."""
    return {
        "others": {
            "work": {
                "workspace": str(houses / "ws-work"),
                "secrets": {"CANARY": canary("work", "secret")},
            },
            "family": {
                "workspace": str(houses / "ws-family"),
                "secrets": {"CANARY": canary("family", "secret")},
            },
            "old": {"workspace": str(houses / "ws-old"), "enabled": False},
        },
        "bindings": [
            {"agent": "work", "channel": "telegram", "chat": str(WORK_GROUP)},
            {"agent": "family", "channel": "telegram", "sender": str(CHILD)},
            {"agent": "family", "channel": "telegram", "chat": str(GRANDMA)},
            {"agent": "old", "channel": "telegram", "chat": str(STRANGER_IN_OLD)},
        ],
        "default": "main",
    }


def seed_houses(folder: Path, houses: Path) -> dict[str, Path]:
    """Each agent's workspace with its canaries in MEMORY.md, USER.md, a skill and a file."""
    workspaces = {"main": folder / "workspace", "work": houses / "ws-work"}
    workspaces["family"] = houses / "ws-family"
    for agent, workspace in workspaces.items():
        skill = workspace / "skills" / f"{agent}-helper"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: {agent}-helper\ndescription: Helps with {canary(agent, 'skill')}.\n"
            "---\nDo the helpful thing.\n",
            encoding="utf-8",
        )
        (workspace / "MEMORY.md").write_text(
            f"# Memory\n\n- The garden password word is {canary(agent, 'memory')}.\n",
            encoding="utf-8",
        )
        (workspace / "USER.md").write_text(
            f"# About the user\n\nThe user's house name is {canary(agent, 'user')}.\n",
            encoding="utf-8",
        )
        (workspace / "notes.txt").write_text(canary(agent, "file"), encoding="utf-8")
    return workspaces


def answer_as_agent(body: dict[str, Any]) -> Reply:
    """The model's answer names the agent whose USER.md its system prompt carries."""
    system = str(body["messages"][0].get("content"))
    found = sorted({agent for agent, kind in canaries_in(system) if kind == "user"})
    return Reply.text(f"answered by {'+'.join(found) or 'nobody'}")


@dataclass
class Agents:
    """The running daemon, its fake Telegram and the workspaces of its agents."""

    daemon: Daemon
    telegram: FakeTelegram
    workspaces: dict[str, Path]

    def requests(self) -> list[str]:
        """Every request the model received so far, as JSON text."""
        return [json.dumps(body, ensure_ascii=False) for body in self.model.requests]

    model: ScriptedModelServer


@contextlib.asynccontextmanager
async def three_agents(
    folder: Path,
    model_server: ScriptedModelServer,
    telegram: FakeTelegram,
    *,
    houses: Path | None = None,
    family: dict[str, Any] | None = None,
    **more: Any,
) -> AsyncIterator[Agents]:
    """The daemon of the three agents in `folder`, the other agents' workspaces in `houses`
    (default `folder`); `family` adds to family's section, `more` adds top-level sections."""
    houses = houses or folder
    config = write_config(folder, model_server)
    data = yaml.safe_load(config.read_text())
    data["agents"] = agents_config(houses)
    data["agents"]["others"]["family"].update(family or {})
    data["memory"] = {"embeddings": "off"}
    data.update(more)
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    workspaces = seed_houses(folder, houses)
    settings = load_settings(config)
    allowed = [str(user) for user in ALLOWED]
    use_fake_telegram(settings, telegram, allow_from=allowed, rate_limit_per_minute=10_000)
    model_server.responder = answer_as_agent
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            daemon = Daemon(running.port, running.context, settings)
            yield Agents(daemon, telegram, workspaces, model_server)


@pytest.fixture
async def agents(
    tmp_path: Path, model_server: ScriptedModelServer, fake_telegram: FakeTelegram
) -> AsyncIterator[Agents]:
    async with three_agents(tmp_path, model_server, fake_telegram) as running:
        yield running


@pytest.fixture
async def asking_agents(
    tmp_path: Path, model_server: ScriptedModelServer, fake_telegram: FakeTelegram
) -> AsyncIterator[Agents]:
    """The three agents, whose exec asks before every command."""
    tools = {"exec": {"approval": "always"}}
    async with three_agents(tmp_path, model_server, fake_telegram, tools=tools) as running:
        yield running
