"""The Channels page in a real browser: a stranger's pairing code approved with one click.

The screenshot goes to tests/artifacts/ (see conftest.py).
"""

from __future__ import annotations

import time

import pytest
from playwright.async_api import expect

from countbot.store.pairing import PairingStore, SenderInfo
from tests.e2e.conftest import CHROMIUM
from tests.e2e.ui import ChatPage

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)


async def test_a_pairing_code_is_approved_from_the_channels_page(chat: ChatPage) -> None:
    # The code a stranger got from the bot (the Telegram side is tested in tests/web).
    store = PairingStore(chat.daemon.context.runtime.db)
    mallory = SenderInfo("555", "mallory", "Mallory")
    assert await store.offer("telegram", mallory, lambda: "K7QW3M", time.time()) == "K7QW3M"

    await chat.by_testid("nav-channels").click()
    request = chat.by_testid("pairing-item")
    await expect(request).to_have_count(1)
    await expect(request).to_contain_text("K7QW3M")
    await expect(request).to_contain_text("@mallory")
    await expect(chat.by_testid("paired-empty")).to_be_visible()

    await request.get_by_test_id("pairing-approve").click()
    await expect(chat.by_testid("toast")).to_contain_text("@mallory")
    await expect(chat.by_testid("pairing-item")).to_have_count(0)
    await expect(chat.by_testid("pairing-empty")).to_be_visible()
    paired = chat.by_testid("paired-item")
    await expect(paired).to_have_count(1)
    await expect(paired).to_contain_text("Mallory · @mallory · 555")
    assert await store.is_paired("telegram", "555")
