"""Fixtures for the channel tests; the harness itself is in `harness.py`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from countbot.config.settings import Settings
from tests.channels.fake_telegram import FakeTelegram
from tests.channels.harness import Bot, telegram_bot


@pytest.fixture
async def fake_telegram() -> AsyncIterator[FakeTelegram]:
    """A fake Telegram server with no bot yet (for tests that start and stop bots themselves)."""
    fake = FakeTelegram()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
async def bot(settings: Settings) -> AsyncIterator[Bot]:
    async with telegram_bot(settings) as running:
        yield running
