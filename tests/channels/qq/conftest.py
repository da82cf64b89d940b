"""A running QQ channel with the fake QQ client connected to it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from countbot.config.settings import QQSettings, Settings
from tests.channels.fake_onebot import FakeQQClient
from tests.channels.harness import ALICE, Bot, running_bot


def use_fake_qq(settings: Settings, fake: FakeQQClient, **overrides: Any) -> None:
    """Enable the QQ channel in `settings` on an ephemeral port, with the fake's token."""
    values: dict[str, Any] = {
        "enabled": True,
        "access_token": fake.token,
        "allow_from": [str(ALICE)],
        "port": 0,
        **overrides,
    }
    settings.channels.qq = QQSettings(**values)


@contextlib.asynccontextmanager
async def qq_bot(settings: Settings, fake: FakeQQClient, **overrides: Any) -> AsyncIterator[Bot]:
    """The channel running and the fake client connected to it."""
    use_fake_qq(settings, fake, **overrides)
    async with running_bot(settings, fake, "qq") as bot:
        await fake.connect(bot.state()["endpoint"])
        await fake.wait_until(lambda: bot.state()["connection"] == "ok", "the client to connect")
        yield bot


@pytest.fixture
async def fake_qq() -> AsyncIterator[FakeQQClient]:
    fake = FakeQQClient()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
async def bot(settings: Settings, fake_qq: FakeQQClient) -> AsyncIterator[Bot]:
    async with qq_bot(settings, fake_qq) as running:
        yield running
