"""A running Discord channel: discord.py connected to the fake Discord's REST API and gateway."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("discord", reason="tests/run.sh installs the [channels] extra")

from countbot.config.settings import DiscordSettings, Settings
from tests.channels.fake_discord import TOKEN, FakeDiscord
from tests.channels.harness import Bot, running_bot

ALICE = 500000000000000001
DM = 600000000000000001


def use_fake_discord(settings: Settings, fake: FakeDiscord, **overrides: Any) -> None:
    values: dict[str, Any] = {
        "enabled": True,
        "token": TOKEN,
        "api_url": fake.api_url,
        "gateway_url": fake.gateway_url,
        "allow_from": [str(ALICE)],
        "stream_edit_interval": 0.1,
        **overrides,
    }
    settings.channels.discord = DiscordSettings(**values)


@pytest.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    fake = FakeDiscord()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
async def bot(settings: Settings, fake_discord: FakeDiscord) -> AsyncIterator[Bot]:
    use_fake_discord(settings, fake_discord)
    async with running_bot(settings, fake_discord, "discord") as running:
        await fake_discord.wait_until(lambda: fake_discord.connected, "the gateway session")
        yield running
