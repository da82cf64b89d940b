"""A real daemon on 127.0.0.1 (uvicorn in this process) and clients that talk to it."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from websockets.asyncio.client import ClientConnection, connect

from countbot.config.loader import load_settings
from countbot.config.settings import Settings
from countbot.config.structs import replaced
from countbot.web.context import DaemonContext
from countbot.web.daemon import bind_listener, serve_daemon
from tests.channels.fake_telegram import FakeTelegram
from tests.channels.harness import use_fake_telegram
from tests.support.scripted_model import ScriptedModelServer

WAIT = 60.0  # an upper bound for a loaded 2-core CI machine; passing tests never wait it out
TOKEN = "test-token-5f1c2a9e7d"


def write_config(folder: Path, model_server: ScriptedModelServer, **web: Any) -> Path:
    """A config.yaml for a daemon in `folder`, talking to the scripted model."""
    data = {
        "model": {
            "name": "openai/test-model",
            "api_base": model_server.base_url,
            "api_key": "sk-test-0123456789abcdef",
            "request_timeout": 10,
            "vision": True,
        },
        "agent": {"retry_delay": 0.01},
        "workspace": "workspace",
        "data_dir": "data",
        "web": {"host": "127.0.0.1", "port": 0, **web},
    }
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@dataclass
class Daemon:
    """A running daemon as its clients see it."""

    port: int
    context: DaemonContext
    settings: Settings

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def http(self, **kwargs: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base, trust_env=False, timeout=WAIT, **kwargs)

    async def ws(self, *, query: str = "", **kwargs: Any) -> WsClient:
        url = f"{self.ws_url}?{query}" if query else self.ws_url
        connection = await connect(url, proxy=None, max_size=None, **kwargs)
        return WsClient(connection)


class WsClient:
    """A WebSocket client that keeps every frame it received."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection
        self.frames: list[dict[str, Any]] = []

    async def send(self, frame: dict[str, Any] | str | bytes) -> None:
        await self.connection.send(frame if isinstance(frame, str | bytes) else json.dumps(frame))

    async def recv(self) -> dict[str, Any]:
        frame = json.loads(await asyncio.wait_for(self.connection.recv(), WAIT))
        self.frames.append(frame)
        return frame

    async def until(self, kind: str, count: int = 1) -> dict[str, Any]:
        """Read frames until the `count`-th frame of type `kind` (counting earlier ones too)."""
        while sum(f["type"] == kind for f in self.frames) < count:
            await self.recv()
        return [f for f in self.frames if f["type"] == kind][count - 1]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f["type"] == kind]

    async def close(self) -> None:
        await self.connection.close()


DaemonFactory = Callable[..., contextlib.AbstractAsyncContextManager[Daemon]]


@pytest.fixture
def start_daemon(tmp_path: Path, model_server: ScriptedModelServer) -> DaemonFactory:
    """Start a daemon with extra `web` settings: `async with start_daemon(token=...) as d`."""

    @contextlib.asynccontextmanager
    async def start(**web: Any) -> AsyncIterator[Daemon]:
        gateway = web.pop("gateway", None)
        mcp = web.pop("mcp", None)
        model = web.pop("model", None)
        settings = load_settings(write_config(tmp_path, model_server, **web))
        if model:
            settings.model = replaced(settings.model, **model)
        if gateway:
            settings.gateway = replaced(settings.gateway, **gateway)
        if mcp:
            settings.mcp = mcp
        listener = bind_listener("127.0.0.1", 0)
        with listener:
            async with serve_daemon(settings, listener) as running:
                yield Daemon(running.port, running.context, settings)

    return start


@pytest.fixture
async def daemon(start_daemon: DaemonFactory) -> AsyncIterator[Daemon]:
    async with start_daemon() as running:
        yield running


@pytest.fixture
async def daemon_with_telegram(
    tmp_path: Path, model_server: ScriptedModelServer, fake_telegram: FakeTelegram
) -> AsyncIterator[Daemon]:
    """A daemon whose Telegram channel polls the fake Bot API server."""
    settings = load_settings(write_config(tmp_path, model_server))
    use_fake_telegram(settings, fake_telegram)
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            yield Daemon(running.port, running.context, settings)
