"""Fixtures for the channel tests; the harness itself is in `harness.py`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from countbot.config.settings import Settings
from tests.channels.harness import Bot, telegram_bot


@pytest.fixture
async def bot(settings: Settings) -> AsyncIterator[Bot]:
    async with telegram_bot(settings) as running:
        yield running
