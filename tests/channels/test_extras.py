"""A channel whose SDK is not installed refuses to start and says which pip command installs it."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

import pytest

from countbot.channels.kit.extras import missing_extra
from countbot.config.settings import (
    DingTalkSettings,
    FeishuSettings,
    Settings,
    WeComSettings,
)
from tests.channels.harness import running_bot

SECTIONS = {
    "feishu": ("lark_oapi", FeishuSettings(enabled=True, app_id="cli_x", app_secret="s")),
    "dingtalk": (
        "dingtalk_stream",
        DingTalkSettings(enabled=True, client_id="ding", client_secret="s"),
    ),
    "wecom": ("aibot", WeComSettings(enabled=True, bot_id="aib", secret="s")),
}


class _NoPlatform:
    """Nothing to connect to: the channel must not get that far."""

    async def wait_until(self, check: Callable[[], bool], what: str = "condition") -> None:
        for _ in range(500):
            if check():
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"timed out waiting for {what}")


def test_an_installed_module_needs_nothing() -> None:
    assert missing_extra("json", "feishu") is None


@pytest.mark.parametrize("name", sorted(SECTIONS))
async def test_an_enabled_channel_without_its_sdk_shows_the_pip_command(
    name: str, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    module, section = SECTIONS[name]
    monkeypatch.setitem(sys.modules, module, None)  # how Python marks a module as absent
    setattr(settings.channels, name, section)

    async with running_bot(settings, _NoPlatform(), name) as bot:
        state = bot.state()
    assert state["state"] == "misconfigured"
    assert f"pip install 'countbot[{name}]'" in state["detail"]
