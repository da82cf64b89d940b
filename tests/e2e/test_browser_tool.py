"""The `browser` tool's screenshot as a person sees it in the web UI: inline under its tool
card, live and after a reload (Debian's chromium twice: the UI's and the assistant's)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.async_api import expect

from countbot.config.loader import load_settings
from countbot.web.daemon import bind_listener, serve_daemon
from tests.browser.site import LoopbackSite
from tests.e2e.conftest import CHROMIUM
from tests.e2e.ui import ChatPage
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon, write_config

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)


@pytest.fixture
def site() -> Iterator[LoopbackSite]:
    made = LoopbackSite()
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
async def daemon(tmp_path: Path, model_server: ScriptedModelServer) -> AsyncIterator[Daemon]:
    """The UI's daemon, whose browser may open the loopback test site."""
    settings = load_settings(write_config(tmp_path, model_server))
    settings.tools.web.allow_private = True
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            yield Daemon(running.port, running.context, settings)


def browser(**arguments: str) -> Reply:
    return Reply.tool_calls(("browser", json.dumps(arguments)))


async def test_a_screenshot_shows_under_its_tool_card(
    chat: ChatPage, model_server: ScriptedModelServer, site: LoopbackSite
) -> None:
    model_server.script(
        browser(action="open", url=site.url("/")),
        browser(action="screenshot"),
        Reply.text("Here is the start page."),
    )
    await chat.send(f"Show me {site.url('/')}")
    await expect(chat.answer_text(chat.messages("assistant"))).to_have_text(
        "Here is the start page."
    )
    image = chat.by_testid("tool-image")
    await expect(image).to_have_count(1)
    assert (await image.get_attribute("src") or "").startswith("data:image/png;base64,iVBOR")
    await chat.reload()
    await expect(chat.by_testid("tool-image")).to_have_count(1)
