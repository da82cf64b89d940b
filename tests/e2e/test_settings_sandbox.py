"""The Settings page in a real browser says whether shell commands run in the sandbox, and looks
again when asked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import CHROMIUM
from tests.e2e.ui import ChatPage

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)


async def test_the_settings_page_shows_the_sandbox_status_in_both_languages(
    chat: ChatPage,
) -> None:
    await chat.by_testid("nav-settings").click()
    section = chat.by_testid("settings-sandbox")
    await expect(section).to_contain_text("Shell sandbox")
    await expect(chat.by_testid("settings-sandbox-state")).to_have_text(
        "Commands run in the sandbox"
    )
    await expect(section).to_contain_text("bubblewrap, network on")
    await expect(section).to_contain_text("tools.exec.sandbox: auto")
    await chat.by_testid("lang-switch").select_option("zh-CN")
    await expect(chat.by_testid("settings-sandbox-state")).to_have_text("命令在沙箱中运行")
    await expect(section).to_contain_text("命令沙箱")
    await section.scroll_into_view_if_needed()
    # The daemon's own wording of the state is translated too.
    await expect(section).to_contain_text("bubblewrap, 可以联网")
    await expect(chat.by_testid("local-model-smollm2-135m")).to_contain_text("小而快")


async def test_check_again_finds_bubblewrap_installed_since_the_start(
    chat: ChatPage, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    found_on = os.environ["PATH"]
    monkeypatch.setenv("PATH", str(tmp_path))  # as on a machine without bubblewrap
    async with chat.daemon.http() as http:
        status = (await http.post("/api/settings/sandbox/probe")).json()
    assert status["active"] is False
    await chat.by_testid("nav-settings").click()
    state = chat.by_testid("settings-sandbox-state")
    await expect(state).not_to_have_text("Commands run in the sandbox")
    await expect(chat.by_testid("settings-sandbox-detail")).to_contain_text("not installed")
    monkeypatch.setenv("PATH", found_on)  # bubblewrap installed meanwhile
    await chat.by_testid("settings-sandbox-probe").click()
    await expect(state).to_have_text("Commands run in the sandbox")
    assert chat.daemon.context.runtime.sandbox.status.active
