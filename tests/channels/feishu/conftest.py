"""A running Feishu channel: lark-oapi connected to the fake Feishu open platform."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("lark_oapi", reason="tests/run.sh installs the [channels] extra")

from countbot.config.settings import FeishuSettings, Settings
from tests.channels.fake_feishu import APP_ID, APP_SECRET, FakeFeishu
from tests.channels.harness import Bot, running_bot

ALICE = "ou_alice"


def use_fake_feishu(settings: Settings, fake: FakeFeishu, **overrides: Any) -> None:
    values: dict[str, Any] = {
        "enabled": True,
        "app_id": APP_ID,
        "app_secret": APP_SECRET,
        "domain": fake.domain,
        "allow_from": [ALICE],
        "stream_edit_interval": 0.1,
        **overrides,
    }
    settings.channels.feishu = FeishuSettings(**values)


@contextlib.asynccontextmanager
async def feishu_bot(settings: Settings, fake: FakeFeishu, **overrides: Any) -> AsyncIterator[Bot]:
    use_fake_feishu(settings, fake, **overrides)
    async with running_bot(settings, fake, "feishu") as bot:
        await fake.wait_until(lambda: fake.connected, "the long connection")
        yield bot


@pytest.fixture
async def fake_feishu() -> AsyncIterator[FakeFeishu]:
    fake = FakeFeishu()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
async def bot(settings: Settings, fake_feishu: FakeFeishu) -> AsyncIterator[Bot]:
    async with feishu_bot(settings, fake_feishu) as running:
        yield running
