"""The chat's "Remember this chat" switch in Chromium: off forgets the chat and keeps it out."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import CHROMIUM
from tests.e2e.ui import ChatPage
from tests.support.scripted_model import Reply, ScriptedModelServer

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)


async def test_switching_remember_off_forgets_the_chat_and_stays_off_after_a_reload(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Noted."), Reply.text("Noted again."), Reply.text("No idea."))
    switch = chat.by_testid("chat-memory")
    await expect(switch).to_be_hidden()  # a new chat has no session to keep out yet
    await chat.send("My locker code is 7243 and the vault word is marmalade.")
    await expect(chat.messages("assistant")).to_have_count(1)
    private = await chat.session_id()
    box = switch.locator("input")
    await expect(box).to_be_checked()
    async with chat.daemon.http() as http:
        found = (await http.get("/api/memory/search", params={"q": "marmalade"})).json()["hits"]
    assert found  # remembered while the switch is on

    await box.uncheck()
    async with chat.daemon.http() as http:
        for _ in range(50):
            info = (await http.get(f"/api/sessions/{private}")).json()
            if not info["memory"]:
                break
            await asyncio.sleep(0.1)  # the switch's PATCH is on its way
    assert info["memory"] is False
    await chat.send("The vault word changes to quince tomorrow.")
    await expect(chat.messages("assistant")).to_have_count(2)
    await chat.reload()
    await expect(switch.locator("input")).not_to_be_checked()

    await chat.by_testid("new-session").click()
    await chat.send("What is the vault word, marmalade or quince?")
    await expect(chat.messages("assistant")).to_have_count(1)
    asked = model_server.requests[-1]["messages"][-1]["content"]
    assert "[Recalled from memory" not in str(asked)
    async with chat.daemon.http() as http:
        for word in ("marmalade", "quince", "7243"):
            hits = (await http.get("/api/memory/search", params={"q": word})).json()["hits"]
            assert not [hit for hit in hits if hit["session_id"] == private], word
