"""Editing config.yaml while the daemon runs: a valid edit takes effect, a bad one is refused
with its reason while the running settings stay, and sections that need a restart are named."""

from __future__ import annotations

import asyncio
from typing import Any

import yaml

from tests.web.conftest import WAIT, Daemon, WsClient


def edit_config(daemon: Daemon, change: dict[str, Any]) -> None:
    path = daemon.settings.config_path
    assert path is not None
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for section, values in change.items():
        data.setdefault(section, {}).update(values)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")


async def next_status(client: WsClient) -> dict[str, Any]:
    async with asyncio.timeout(WAIT):
        while True:
            frame = await client.recv()
            if frame["type"] == "status":
                return frame


async def test_a_config_edit_takes_effect_or_says_why_not(daemon: Daemon) -> None:
    client = await daemon.ws()
    await client.send({"type": "subscribe_notices"})
    first = await next_status(client)
    assert first["config"] == {"error": "", "restart": []}

    edit_config(daemon, {"persona": {"name": "Zephyrine"}, "budget": {"daily_tokens": 5000}})
    applied = await next_status(client)
    assert applied["config"] == {"error": "", "restart": []}
    assert daemon.context.runtime.settings.persona.name == "Zephyrine"
    assert daemon.context.runtime.settings.budget.daily_tokens == 5000
    async with daemon.http() as http:
        shown = (await http.get("/api/settings")).json()
    assert shown["persona"]["name"] == "Zephyrine"

    path = daemon.settings.config_path
    assert path is not None
    good = path.read_text(encoding="utf-8")
    path.write_text(good + "model: [unclosed\n", encoding="utf-8")
    refused = await next_status(client)
    assert "config.yaml" in refused["config"]["error"]
    assert daemon.context.runtime.settings.persona.name == "Zephyrine"
    assert daemon.context.runtime.settings.model.name == "openai/test-model"

    path.write_text(good, encoding="utf-8")
    edit_config(daemon, {"web": {"max_body_bytes": 123456}})
    later = await next_status(client)
    assert later["config"] == {"error": "", "restart": ["web"]}
    await client.close()
