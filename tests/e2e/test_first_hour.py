"""What a new user tripped over in their first hour (issue 11), each in a real browser.

Chromium against a real daemon and the scripted model server; screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from playwright.async_api import Browser, BrowserContext, Locator, expect

from countbot.config.loader import load_settings
from countbot.config.structs import replaced
from countbot.gateway.messages import InboundMessage
from countbot.web.daemon import bind_listener, serve_daemon
from tests.e2e.conftest import CHROMIUM, WAIT_MS
from tests.e2e.ui import ChatPage
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon, write_config

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)

SLOW_ANSWER = "Counting slowly: one, two, three, four, five, six, seven, eight, nine, ten."
# A 1x1 PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def notice(chat: ChatPage, code: str) -> Locator:
    return chat.page.locator(f'[data-testid="notice"][data-code="{code}"]')


async def set_model_name(daemon: Daemon, name: str) -> None:
    async with daemon.http() as http:
        response = await http.put("/api/settings", json={"model": {"name": name}})
        assert response.status_code == 200, response.text


# --- 1. Memory --------------------------------------------------------------------------------


async def test_a_memory_save_never_overwrites_a_note_saved_meanwhile(chat: ChatPage) -> None:
    memory = chat.daemon.context.runtime.memory
    await memory.write("# Memory\n- likes tea\n")
    await chat.by_testid("nav-memory").click()
    editor = chat.by_testid("memory-editor")
    await expect(editor).to_have_value("# Memory\n- likes tea\n")
    await editor.fill("# Memory\n- likes tea\n- lives in Lyon\n")
    # The assistant saves a note while the page is open.
    await memory.append("- birthday on 3 May")
    await chat.by_testid("memory-save").click()

    await expect(chat.by_testid("memory-status")).to_contain_text("changed since you opened it")
    diff = chat.by_testid("memory-diff")
    await expect(diff.locator('[data-kind="removed"]')).to_contain_text(["birthday on 3 May"])
    await expect(diff.locator('[data-kind="added"]')).to_contain_text(["lives in Lyon"])
    assert "birthday on 3 May" in await memory.read()  # theirs is untouched
    await expect(editor).to_have_value("# Memory\n- likes tea\n- lives in Lyon\n")  # so is mine

    # Take theirs, add mine back by hand, save: both survive.
    await chat.by_testid("memory-use-theirs").click()
    await expect(editor).to_have_value(await memory.read())
    await expect(chat.by_testid("memory-conflict")).to_contain_text("lives in Lyon")
    await editor.fill(f"{await memory.read()}- lives in Lyon\n")
    await chat.by_testid("memory-save").click()
    await expect(chat.by_testid("memory-status")).to_have_text("Saved")
    await expect(chat.by_testid("memory-conflict")).to_be_hidden()
    saved = await memory.read()
    assert "birthday on 3 May" in saved and "lives in Lyon" in saved

    # Another conflict, settled with "Keep both": every line of either version, then saved.
    await editor.fill(f"{saved}- plays chess\n")
    await memory.append("- allergic to nuts")
    await chat.by_testid("memory-save").click()
    await expect(chat.by_testid("memory-status")).to_contain_text("changed since you opened it")
    await chat.by_testid("memory-keep-both").click()
    await expect(chat.by_testid("memory-status")).to_contain_text("Both versions are in the editor")
    await chat.by_testid("memory-save").click()
    await expect(chat.by_testid("memory-status")).to_have_text("Saved")
    both = await memory.read()
    for line in ("birthday on 3 May", "lives in Lyon", "plays chess", "allergic to nuts"):
        assert both.count(line) == 1, both


async def test_leaving_the_memory_page_with_unsaved_edits_asks_first(chat: ChatPage) -> None:
    await chat.by_testid("nav-memory").click()
    editor = chat.by_testid("memory-editor")
    await editor.fill("- something worth keeping\n")
    await chat.by_testid("nav-chat").click()  # the test's dialog handler says "no"
    for _ in range(100):
        if chat.dialogs:
            break
        await asyncio.sleep(0.05)
    assert "unsaved changes" in chat.dialogs[0]
    await expect(editor).to_have_value("- something worth keeping\n")
    assert chat.page.url.endswith("#/memory")
    # Closing or reloading the tab asks as well (the browser's own question).
    leaving = await chat.page.evaluate(
        "() => { const e = new Event('beforeunload', {cancelable: true});"
        " dispatchEvent(e); return e.defaultPrevented; }"
    )
    assert leaving is True
    await chat.by_testid("memory-save").click()
    await expect(chat.by_testid("memory-status")).to_have_text("Saved")
    await chat.by_testid("nav-chat").click()
    await expect(chat.by_testid("composer-input")).to_be_visible()
    assert len(chat.dialogs) == 1


# --- 2. Reload mid-answer ---------------------------------------------------------------------


async def test_a_reload_mid_answer_shows_it_from_the_start_then_continues(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text(SLOW_ANSWER, chunks=10, delay=0.6))
    await chat.send("count slowly")
    await expect(chat.answer_text(chat.streaming())).to_contain_text("Counting")
    await chat.reload()
    live = chat.streaming()
    # Everything streamed so far is back at once, from the first word.
    await expect(chat.answer_text(live)).to_have_text(re.compile(r"^Counting slowly"))
    shown = (await chat.answer_text(live).text_content() or "").strip()
    assert shown != SLOW_ANSWER
    await expect(chat.by_testid("stop-button")).to_be_visible()
    answer = chat.messages("assistant")
    await expect(answer).not_to_have_attribute("data-streaming", "true")
    await expect(chat.answer_text(answer)).to_have_text(SLOW_ANSWER)
    await expect(chat.messages("user")).to_have_text(["count slowly"])
    await expect(chat.by_testid("stop-button")).to_be_hidden()


# --- 3, 4. No model ---------------------------------------------------------------------------


async def test_the_no_model_banner_follows_the_daemon_live(chat: ChatPage) -> None:
    banner = chat.page.locator("#banner")
    # Right after a start litellm is still loading: a configured model is no reason for a banner.
    chat.daemon.context.litellm_ready = False
    await chat.reload()
    await expect(chat.by_testid("conn-state")).to_have_attribute("data-state", "open")
    await expect(banner).to_be_hidden()
    await set_model_name(chat.daemon, "")
    await expect(banner).to_be_visible()  # pushed, without navigating
    await set_model_name(chat.daemon, "openai/test-model")
    await expect(banner).to_be_hidden()


async def test_without_a_model_the_first_message_gets_guidance_not_a_provider_error(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    await set_model_name(chat.daemon, "")
    await chat.send("hello?")
    guidance = notice(chat, "no_model")
    await expect(guidance).to_contain_text("No model is configured yet")
    await expect(chat.page.locator('[data-testid="notice"]')).not_to_contain_text(["LLM Provider"])
    await expect(chat.by_testid("stop-button")).to_be_hidden()
    assert not model_server.requests
    await chat.reload()
    await expect(chat.messages("user")).to_have_text(["hello?"])  # the message was kept
    await expect(notice(chat, "no_model")).to_contain_text("No model is configured yet")
    await notice(chat, "no_model").get_by_test_id("notice-settings").click()
    await expect(chat.by_testid("settings-model-name")).to_be_visible()


# --- 6 is in tests/scheduler; 7. The session list -----------------------------------------------


async def test_sessions_changed_elsewhere_appear_in_an_open_tab(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    items = chat.by_testid("session-item")
    await expect(items).to_have_count(0)
    model_server.script(Reply.text("Hi from Telegram."))
    # A conversation started on another surface (what Telegram's intake submits).
    message = InboundMessage(
        channel="telegram",
        content="hello from my phone",
        sender="7",
        chat_id="7",
        session_id="telegram:7",
    )
    await chat.daemon.context.gateway.submit(message)
    await expect(items).to_have_count(1)
    await expect(items).to_contain_text(["hello from my phone"])
    sessions = chat.daemon.context.runtime.sessions
    await sessions.rename("telegram:7", "Phone chat")
    await expect(items).to_have_text([re.compile("Phone chat")])
    # Renaming the open chat in the sidebar updates the header too.
    await items.first.locator(".session-open").click()
    await expect(chat.page.locator("#view-title")).to_have_text("Phone chat")
    await items.first.get_by_test_id("session-rename").click()
    await chat.by_testid("session-rename-input").fill("Renamed here")
    await chat.by_testid("session-rename-input").press("Enter")
    await expect(chat.page.locator("#view-title")).to_have_text("Renamed here")
    await sessions.delete("telegram:7")
    await expect(items).to_have_count(0)


# --- 8. A daemon restart ------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def daemon_on(config: Path, port: int) -> AsyncIterator[Daemon]:
    settings = load_settings(config)
    with bind_listener("127.0.0.1", port) as listener:
        async with serve_daemon(settings, listener) as running:
            yield Daemon(running.port, running.context, settings)


@contextlib.asynccontextmanager
async def desktop(browser: Browser) -> AsyncIterator[BrowserContext]:
    """A fresh browser profile for tests that start and stop their own daemons."""
    context = await browser.new_context(viewport={"width": 1100, "height": 760}, locale="en-US")
    context.set_default_timeout(WAIT_MS)
    try:
        yield context
    finally:
        await context.close()


async def test_a_message_sent_while_the_daemon_restarts_stays_on_screen(
    browser: Browser, tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    async with desktop(browser) as context:
        model_server.script(Reply.text(SLOW_ANSWER, chunks=20, delay=0.5))
        async with daemon_on(config, 0) as first:
            port = first.port
            chat = ChatPage(await context.new_page(), first)
            await chat.open()
            await chat.send("count slowly")
            await expect(chat.answer_text(chat.streaming())).to_contain_text("Counting")
        # The daemon is gone mid-answer.
        await expect(chat.by_testid("conn-state")).not_to_have_attribute("data-state", "open")
        await chat.send("are you back?")
        await expect(chat.messages("user")).to_have_text(["count slowly", "are you back?"])
        model_server.script(Reply.text("Yes, back again."))
        async with daemon_on(config, port) as second:
            chat.daemon = second
            await chat.wait_connected()
            await expect(chat.answer_text(chat.messages("assistant").last)).to_have_text(
                "Yes, back again."
            )
            await expect(chat.messages("user")).to_have_text(["count slowly", "are you back?"])
            await expect(chat.by_testid("stop-button")).to_be_hidden()
            await chat.reload()
            await expect(chat.by_testid("stop-button")).to_be_hidden()
            await expect(chat.messages("user")).to_have_text(["count slowly", "are you back?"])
        assert not chat.errors, chat.errors
        await chat.screenshot("daemon_restart")


def slow_summaries(body: dict[str, Any]) -> Reply:
    """The model for the window test: a summary pass hangs (and fails), so every turn past the
    history limit waits before it stores its user message; "count slowly" streams for a while."""
    system = body["messages"][0]["content"]
    if isinstance(system, str) and "Summarize the conversation excerpt" in system:
        return Reply.hang(1.5)
    if "count slowly" in str(body["messages"][-1]["content"]):
        return Reply.text(SLOW_ANSWER, chunks=8, delay=0.3)
    return Reply.text("ok")


async def test_a_follow_up_not_yet_stored_by_its_turn_survives_a_reload(
    browser: Browser, tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["agent"]["max_history"] = 4  # from the fourth turn on, a (slow) summary pass runs first
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    model_server.responder = slow_summaries
    async with desktop(browser) as context, daemon_on(config, 0) as daemon:
        chat = ChatPage(await context.new_page(), daemon)
        await chat.open()
        for count, text in enumerate(("one", "two", "three"), start=1):
            await chat.send(text)
            await expect(chat.messages("assistant")).to_have_count(count)
        await chat.send("count slowly")
        await expect(chat.answer_text(chat.streaming())).to_contain_text("Counting")
        await chat.send("and then?")  # a follow-up: stored only once its own turn starts
        await expect(chat.messages("user").last).to_contain_text("Queued")
        await expect(chat.answer_text(chat.messages("assistant").last)).to_have_text(SLOW_ANSWER)
        await chat.reload()  # while the follow-up's turn is still in its summary pass
        shown = ["one", "two", "three", "count slowly", "and then?"]
        await expect(chat.messages("user")).to_have_text(shown)
        session_id = await chat.page.evaluate("localStorage.getItem('countbot.session')")
        stored = await daemon.context.runtime.sessions.messages(session_id, limit=50)
        # Still in the window: the follow-up is not stored yet.
        assert "and then?" not in [r["content"] for r in stored if r["type"] == "user"]
        await expect(chat.answer_text(chat.messages("assistant").last)).to_have_text("ok")
        await expect(chat.messages("user")).to_have_text(shown)
        assert not chat.errors, chat.errors


# --- 10. Images for a model without vision -------------------------------------------------------


async def test_an_image_for_a_model_without_vision_gets_a_notice(
    chat: ChatPage, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    settings = chat.daemon.context.runtime.settings
    settings.model = replaced(settings.model, vision=False)
    picture = tmp_path / "dot.png"
    picture.write_bytes(PIXEL)
    await chat.by_testid("image-input").set_input_files(str(picture))
    await expect(chat.by_testid("attachment")).to_have_count(1)
    model_server.script(Reply.text("I cannot see it, sorry."))
    await chat.send("what is in this picture?")
    await expect(notice(chat, "no_vision")).to_contain_text("cannot see images")
    await expect(chat.answer_text(chat.messages("assistant"))).to_have_text(
        "I cannot see it, sorry."
    )
    sent = str(model_server.requests[-1]["messages"])
    assert "[image attached: image/png]" in sent and "base64" not in sent
    await chat.reload()
    await expect(notice(chat, "no_vision")).to_contain_text("cannot see images")


# --- Polish ----------------------------------------------------------------------------------


async def test_a_stopped_answer_reads_the_same_live_and_after_reload(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text(SLOW_ANSWER, chunks=12, delay=1.0))
    await chat.send("count very slowly")
    await expect(chat.answer_text(chat.streaming())).not_to_be_empty()
    await chat.by_testid("stop-button").click()
    await expect(notice(chat, "cancelled")).to_have_text("Stopped.")
    await chat.reload()
    await expect(notice(chat, "cancelled")).to_have_text("Stopped.")


async def test_chinese_labels_for_skills_personas_channels_and_costs(chat: ChatPage) -> None:
    await chat.by_testid("lang-switch").select_option("zh-CN")
    await chat.by_testid("nav-skills").click()
    weather = chat.page.locator('[data-testid="skill-item"][data-skill="weather"]')
    await expect(weather).to_contain_text("内置")
    await expect(weather).to_contain_text("天气")
    await expect(weather).not_to_contain_text("builtin")
    await chat.by_testid("nav-settings").click()
    preset = chat.by_testid("settings-preset")
    await expect(preset.locator("option", has_text="助手")).to_have_count(1)
    await chat.by_testid("nav-channels").click()
    await expect(chat.page.locator("#view-panel")).not_to_contain_text("disabled")
    await chat.by_testid("nav-usage").click()
    stats = chat.page.locator(".stat-value").last
    await expect(stats).to_have_text("$0.00")


async def test_a_language_switch_relabels_skill_and_persona_descriptions_at_once(
    chat: ChatPage,
) -> None:
    switch = chat.by_testid("lang-switch")
    await switch.select_option("en")
    await chat.by_testid("nav-skills").click()
    weather = chat.page.locator('[data-testid="skill-item"][data-skill="weather"] p').first
    await expect(weather).to_contain_text("wttr.in")
    english = await weather.inner_text()
    await switch.select_option("zh-CN")
    await expect(weather).to_have_text(
        "任意地点的当前天气和简短预报，数据来自 wttr.in（无需 API 密钥）。"
    )
    await switch.select_option("en")
    await expect(weather).to_have_text(english)

    await chat.by_testid("nav-settings").click()
    await chat.by_testid("settings-preset").select_option("assistant")
    hint = chat.by_testid("settings-preset-hint")
    await expect(hint).not_to_be_empty()
    english = await hint.inner_text()
    await switch.select_option("zh-CN")
    await expect(hint).to_have_text("能干友好，把事情办好，回答简短")
    await expect(chat.by_testid("settings-preset").locator("option:checked")).to_have_text("助手")
    await switch.select_option("en")
    await expect(hint).to_have_text(english)
    await expect(chat.by_testid("settings-preset").locator("option:checked")).to_have_text(
        "assistant"
    )


async def test_when_the_daemon_is_down_pages_say_so_in_words(
    browser: Browser, tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    async with desktop(browser) as context:
        async with daemon_on(config, 0) as running:
            chat = ChatPage(await context.new_page(), running)
            await chat.open()
        await chat.by_testid("nav-usage").click()
        failed = chat.page.locator(".load-error")
        await expect(failed).to_contain_text("CountBot is not reachable")
        await expect(failed).not_to_contain_text("Failed to fetch")


async def test_settings_do_not_keep_saved_after_an_edit(chat: ChatPage) -> None:
    await chat.by_testid("nav-settings").click()
    await chat.by_testid("settings-save").click()
    status = chat.by_testid("settings-status")
    await expect(status).to_have_text("Saved")
    await chat.by_testid("settings-temperature").fill("7")  # out of range
    await expect(status).to_have_text("")


async def test_on_a_phone_costs_times_and_buttons_fit(
    browser: Browser, daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    context = await browser.new_context(viewport={"width": 375, "height": 740}, locale="en-US")
    context.set_default_timeout(WAIT_MS)
    try:
        chat = ChatPage(await context.new_page(), daemon)
        await chat.open()
        model_server.script(Reply.tool_calls(("list_dir", '{"path": "."}')), Reply.text("Done."))
        await chat.send("a session with a rather long first message for its title")
        await expect(chat.answer_text(chat.messages("assistant"))).to_have_text("Done.")
        await chat.page.goto(f"{daemon.base}/#/usage")
        cost = chat.by_testid("usage-by-session").locator("thead th").last
        await expect(cost).to_have_text("Cost")
        box = await cost.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 375
        await chat.page.goto(f"{daemon.base}/#/audit")
        await expect(chat.by_testid("audit-entry").locator(".audit-time").first).to_be_visible()
        await chat.page.goto(f"{daemon.base}/#/cron")
        await chat.by_testid("cron-name").fill("Tea")
        await chat.by_testid("cron-value").fill("whenever it suits")
        await chat.by_testid("cron-prompt").fill("Remind me of tea")
        create = chat.by_testid("cron-create")
        one_line = (await create.bounding_box() or {}).get("height")
        await create.click()  # the daemon refuses: its validation error shows beside the button
        await expect(chat.by_testid("cron-status")).to_have_attribute("data-kind", "error")
        assert (await create.bounding_box() or {}).get("height") == one_line
        await chat.screenshot("phone_cron_error")
        assert not chat.errors, chat.errors
    finally:
        await context.close()
