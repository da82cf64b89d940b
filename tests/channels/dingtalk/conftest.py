"""A running DingTalk channel: dingtalk-stream connected to the fake DingTalk platform."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("dingtalk_stream", reason="tests/run.sh installs the [channels] extra")

from countbot.config.settings import DingTalkSettings, Settings
from tests.channels.fake_dingtalk import APP_KEY, APP_SECRET, FakeDingTalk
from tests.channels.harness import Bot, running_bot

ALICE = "staff_alice"


def use_fake_dingtalk(settings: Settings, fake: FakeDingTalk, **overrides: Any) -> None:
    values: dict[str, Any] = {
        "enabled": True,
        "client_id": APP_KEY,
        "client_secret": APP_SECRET,
        "endpoint": fake.endpoint,
        "oapi_endpoint": fake.endpoint,
        "allow_from": [ALICE],
        **overrides,
    }
    settings.channels.dingtalk = DingTalkSettings(**values)


@pytest.fixture
async def fake_dingtalk() -> AsyncIterator[FakeDingTalk]:
    fake = FakeDingTalk()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
async def bot(settings: Settings, fake_dingtalk: FakeDingTalk) -> AsyncIterator[Bot]:
    use_fake_dingtalk(settings, fake_dingtalk)
    async with running_bot(settings, fake_dingtalk, "dingtalk") as running:
        await fake_dingtalk.wait_until(lambda: fake_dingtalk.connected, "the stream connection")
        yield running
