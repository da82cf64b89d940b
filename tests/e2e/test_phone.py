"""The chat on a phone-sized screen: a toast never covers the Send button (nor on a desktop), the
working indicator shows, the composer's choices stay readable, and the message actions work by
touch."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, expect

from tests.e2e.conftest import CHROMIUM, WAIT_MS
from tests.e2e.ui import ChatPage
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)

PHONE = {"width": 390, "height": 844}


@pytest.fixture
async def phone(browser: Browser, daemon: Daemon) -> AsyncIterator[ChatPage]:
    """The UI open on a phone-sized touch screen; the page must not throw."""
    context = await browser.new_context(viewport=PHONE, locale="en-US", has_touch=True)
    context.set_default_timeout(WAIT_MS)
    chat = ChatPage(await context.new_page(), daemon)
    try:
        await chat.open()
        yield chat
        assert not chat.errors, chat.errors
    finally:
        await context.close()


@pytest.mark.parametrize("width", [390, 1100])
async def test_a_toast_leaves_the_send_button_free(phone: ChatPage, width: int) -> None:
    await phone.page.set_viewport_size({"width": width, "height": 760})
    # The toast module's own entry point, as the page uses it when the daemon is not reachable.
    await phone.page.evaluate(
        "import('/static/lib/toast.js').then((m) => m.toast('The daemon is not reachable'))"
    )
    toast = phone.by_testid("toast")
    await expect(toast).to_be_visible()
    send = await phone.by_testid("send-button").bounding_box()
    shown = await toast.bounding_box()
    assert send and shown
    apart = shown["y"] + shown["height"] <= send["y"] or send["y"] + send["height"] <= shown["y"]
    assert apart, (shown, send)
    await phone.send("still works")
    await expect(phone.messages("user")).to_have_text("still works")
    await phone.screenshot(f"toast_{width}")


async def test_on_a_phone_the_turn_shows_signs_of_life_and_answers_can_be_regenerated(
    phone: ChatPage, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("First try.", chunks=2, delay=1.2), Reply.text("Second try."))
    await phone.send("say something")
    working = phone.by_testid("working")
    await expect(working).to_be_visible()
    await expect(working).to_be_in_viewport()
    await expect(working).to_be_hidden()
    answer = phone.messages("assistant")
    await expect(phone.answer_text(answer)).to_have_text("First try.")
    await answer.get_by_test_id("message-regenerate").tap()
    await expect(phone.answer_text(phone.messages("assistant"))).to_have_text("Second try.")
    await phone.messages("user").get_by_test_id("message-edit").tap()
    await expect(phone.by_testid("message-edit-input")).to_have_value("say something")
    await phone.screenshot("phone_edit")


# How much of a select's box its chosen option's text leaves free (the arrow needs ~16 px).
_ROOM_FOR_CHOICE = """
(select) => {
  const style = getComputedStyle(select);
  const pen = document.createElement("canvas").getContext("2d");
  pen.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const text = pen.measureText(select.options[select.selectedIndex].text).width;
  return select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - text;
}
"""


async def test_on_a_phone_the_composer_choices_stay_readable_during_a_turn(
    phone: ChatPage, model_server: ScriptedModelServer
) -> None:
    gate = threading.Event()
    model_server.script(Reply.text("Thinking it over.", chunks=2, gate=gate))
    try:
        await phone.send("take your time")
        mode = phone.by_testid("queue-mode")
        await expect(mode).to_be_visible()
        await expect(phone.by_testid("stop-button")).to_be_visible()
        await phone.screenshot("phone_composer_during_turn")
        assert await mode.evaluate(_ROOM_FOR_CHOICE) >= 16
        await expect(mode).to_be_in_viewport(ratio=1)
        await expect(phone.by_testid("send-button")).to_be_in_viewport(ratio=1)
    finally:
        gate.set()
    await expect(phone.answer_text(phone.messages("assistant"))).to_have_text("Thinking it over.")
