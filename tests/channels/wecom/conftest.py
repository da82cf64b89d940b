"""A running WeCom channel: wecom-aibot-python-sdk connected to the fake WeCom over TLS."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("aibot", reason="tests/run.sh installs the [channels] extra")

import trustme

from countbot.config.settings import Settings, WeComSettings
from tests.channels.fake_wecom import BOT_ID, SECRET, FakeWeCom, trust_fake_wecom
from tests.channels.harness import Bot, running_bot

ALICE = "alice.zhang"


def use_fake_wecom(settings: Settings, fake: FakeWeCom, **overrides: Any) -> None:
    values: dict[str, Any] = {
        "enabled": True,
        "bot_id": BOT_ID,
        "secret": SECRET,
        "ws_url": fake.ws_url,
        "allow_from": [ALICE],
        "stream_edit_interval": 0.1,
        **overrides,
    }
    settings.channels.wecom = WeComSettings(**values)


@pytest.fixture
async def fake_wecom() -> AsyncIterator[FakeWeCom]:
    ca = trustme.CA()
    trust_fake_wecom(ca)
    fake = FakeWeCom(ca)
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
async def bot(settings: Settings, fake_wecom: FakeWeCom) -> AsyncIterator[Bot]:
    use_fake_wecom(settings, fake_wecom)
    async with running_bot(settings, fake_wecom, "wecom") as running:
        await fake_wecom.wait_until(lambda: fake_wecom.connected, "the long connection")
        yield running
