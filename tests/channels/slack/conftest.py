"""A running Slack channel: slack-sdk's Web API and Socket Mode clients on the fake Slack."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("slack_sdk", reason="tests/run.sh installs the [channels] extra")

from countbot.config.settings import Settings, SlackSettings
from tests.channels.fake_slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.channels.harness import Bot, running_bot

ALICE = "UALICE01"


def use_fake_slack(settings: Settings, fake: FakeSlack, **overrides: Any) -> None:
    values: dict[str, Any] = {
        "enabled": True,
        "bot_token": BOT_TOKEN,
        "app_token": APP_TOKEN,
        "api_url": fake.api_url,
        "allow_from": [ALICE],
        "stream_edit_interval": 0.1,
        **overrides,
    }
    settings.channels.slack = SlackSettings(**values)


@pytest.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
async def bot(settings: Settings, fake_slack: FakeSlack) -> AsyncIterator[Bot]:
    use_fake_slack(settings, fake_slack)
    async with running_bot(settings, fake_slack, "slack") as running:
        await fake_slack.wait_until(lambda: fake_slack.connected, "the Socket Mode connection")
        yield running
