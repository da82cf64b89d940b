"""A running email channel: imaplib and smtplib against the fake mail provider."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("aiosmtpd", reason="tests/run.sh installs the test extra")

from countbot.config.settings import EmailSettings, Settings
from tests.channels.fake_mail import AUTHSERV, BOT, PASSWORD, FakeMail
from tests.channels.harness import Bot, running_bot

ALICE = "alice@example.com"


def use_fake_mail(settings: Settings, fake: FakeMail, **overrides: Any) -> None:
    values: dict[str, Any] = {
        "enabled": True,
        "address": BOT,
        "password": PASSWORD,
        "imap_host": "127.0.0.1",
        "imap_port": fake.imap_port,
        "imap_security": "none",
        "smtp_host": "127.0.0.1",
        "smtp_port": fake.smtp_port,
        "smtp_security": "none",
        "authserv_id": AUTHSERV,
        "poll_interval": 1.0,
        "allow_from": [ALICE],
        **overrides,
    }
    settings.channels.email = EmailSettings(**values)


@pytest.fixture
async def bot(settings: Settings, fake_mail: FakeMail) -> AsyncIterator[Bot]:
    use_fake_mail(settings, fake_mail)
    async with running_bot(settings, fake_mail, "email") as running:
        yield running
