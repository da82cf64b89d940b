"""Editing config.yaml while the page is open: the change shows, a bad edit is explained."""

from __future__ import annotations

import pytest
import yaml
from playwright.async_api import expect

from tests.e2e.conftest import CHROMIUM
from tests.e2e.ui import ChatPage

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)


async def test_a_config_file_edit_takes_effect_in_the_open_page(chat: ChatPage) -> None:
    path = chat.daemon.settings.config_path
    assert path is not None
    good = path.read_text(encoding="utf-8")
    path.write_text(good + "model: [unclosed\n", encoding="utf-8")
    notice = chat.by_testid("config-notice")
    await expect(notice).to_be_visible()
    await expect(notice).to_contain_text("the running settings are kept")
    await chat.screenshot("config_error_banner")

    data = yaml.safe_load(good)
    data["model"]["temperature"] = 0.3
    data["web"]["max_body_bytes"] = 123456
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    await expect(notice).to_contain_text("web take effect after a restart")
    await chat.by_testid("nav-settings").click()
    await expect(chat.by_testid("settings-temperature")).to_have_value("0.3")
    await chat.by_testid("lang-switch").select_option("zh-CN")
    await expect(notice).to_contain_text("需要重启")
    await chat.screenshot("config_restart_banner_zh")
