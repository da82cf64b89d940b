"""A daemon bound to another address than 127.0.0.1, used from a real browser with its token.

127.0.0.2 stands in for a LAN address: the page must load under the bound address, the login
must take the token, and a chat turn must stream back (Host and Origin checks included).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, expect

from countbot.config.loader import load_settings
from countbot.web.daemon import bind_listener, serve_daemon
from tests.e2e.conftest import WAIT_MS
from tests.e2e.ui import ChatPage
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import TOKEN, Daemon, write_config

HOST = "127.0.0.2"


class SecondLoopbackDaemon(Daemon):
    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{HOST}:{self.port}/ws"


@pytest.fixture
async def remote_daemon(
    tmp_path: Path, model_server: ScriptedModelServer
) -> AsyncIterator[SecondLoopbackDaemon]:
    settings = load_settings(write_config(tmp_path, model_server, host=HOST, token=TOKEN))
    with bind_listener(HOST, 0) as listener:
        async with serve_daemon(settings, listener) as running:
            # litellm loads in the background after start; on a busy machine that takes a while.
            for _ in range(900):
                if running.context.litellm_ready:
                    break
                await asyncio.sleep(0.1)
            yield SecondLoopbackDaemon(running.port, running.context, settings)


async def test_a_browser_signs_in_on_the_bound_address_and_chats(
    browser: Browser, remote_daemon: SecondLoopbackDaemon, model_server: ScriptedModelServer
) -> None:
    context = await browser.new_context(viewport={"width": 1100, "height": 760}, locale="en-US")
    context.set_default_timeout(WAIT_MS)
    ui = ChatPage(await context.new_page(), remote_daemon)
    try:
        await ui.page.goto(f"{remote_daemon.base}/login")
        await ui.page.locator("#token").fill(TOKEN)
        await ui.page.get_by_role("button", name="Sign in").click()
        await ui.page.wait_for_url(f"{remote_daemon.base}/")
        await ui.wait_connected()
        model_server.script(Reply.text("Hello from the second address.", chunks=3))
        await ui.send("hi there")
        answer = ui.messages("assistant").last
        await expect(ui.answer_text(answer)).to_have_text("Hello from the second address.")
        assert not ui.errors, ui.errors
    finally:
        await ui.screenshot("remote_access_127_0_0_2")
        await context.close()
