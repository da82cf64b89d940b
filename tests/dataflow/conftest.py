"""Attackers on loopback and a daemon whose model obeys them.

Two "hosts" are two loopback addresses (127.0.0.1 and 127.0.0.2), each with its own HTTP server
(`tests/support/sites.py`); a third serves SearXNG's JSON API. The daemon fetches them with
`tools.web.allow_private` on, since every test server is on loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from countbot.config.loader import load_settings
from countbot.web.daemon import bind_listener, serve_daemon
from tests.support.scripted_model import ScriptedModelServer
from tests.support.sites import Site
from tests.web.conftest import Daemon, WsClient, write_config

PIN = "4821"


@pytest.fixture
def sites() -> Iterator[tuple[Site, Site, Site]]:
    """The page the user names (127.0.0.1), a second host (127.0.0.2) and a search service."""
    made = [Site("127.0.0.1"), Site("127.0.0.2"), Site("127.0.0.3")]
    try:
        yield made[0], made[1], made[2]
    finally:
        for site in made:
            site.close()


DaemonStarter = Callable[..., contextlib.AbstractAsyncContextManager[Daemon]]


@pytest.fixture
def attack_daemon(
    tmp_path: Path, model_server: ScriptedModelServer, sites: tuple[Site, Site, Site]
) -> DaemonStarter:
    """A daemon fetching loopback pages and searching the fake SearXNG; `**changes` per test."""

    @contextlib.asynccontextmanager
    async def start(configure: Callable[[Any], None] | None = None) -> AsyncIterator[Daemon]:
        settings = load_settings(write_config(tmp_path, model_server))
        settings.tools.web.allow_private = True  # every test server is on loopback
        settings.tools.web.search_backend = "searxng"
        settings.tools.web.search_url = sites[2].base
        settings.tools.exec.approval_timeout = 10
        if configure is not None:
            configure(settings)
        with bind_listener("127.0.0.1", 0) as listener:
            async with serve_daemon(settings, listener) as running:
                yield Daemon(running.port, running.context, settings)

    return start


async def turn(daemon: Daemon, text: str, *, session: str = "s1", answer: str = "deny") -> WsClient:
    """Send `text` over the WebSocket and answer every approval question with `answer`."""
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": session, "content": text})
    while True:
        frame = await client.recv()
        if frame["type"] == "approval_request":
            response = {"type": "approval_response", "id": frame["id"], "decision": answer}
            await client.send(response)
        if frame["type"] in ("done", "error", "cancelled"):
            break
    await client.close()
    return client


async def audit_records(daemon: Daemon, kind: str = "outbound") -> list[dict[str, Any]]:
    """The audit log's records of `kind`, once everything written so far is on disk."""
    await daemon.context.runtime.audit.flush()
    path = daemon.settings.data_dir / "audit.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [record for line in lines if (record := json.loads(line)).get("type") == kind]


async def wait_for_tools(daemon: Daemon, *names: str) -> None:
    """Until the MCP servers' tools `names` are in the registry (they start in the background)."""
    for _ in range(200):
        if set(names) <= set(daemon.context.runtime.tools.names()):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the MCP tools {names} never appeared")
