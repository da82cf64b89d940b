"""The browser UI end to end: Debian's chromium, headless, against a real daemon and model script.

Each test saves a screenshot to tests/artifacts/ (see conftest.py).
"""

from __future__ import annotations

import itertools
import json
import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import CHROMIUM
from tests.e2e.ui import ChatPage
from tests.support.scripted_model import Reply, ScriptedModelServer

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)

SLOW_ANSWER = "Counting slowly: one, two, three, four, five, six, seven, eight, nine, ten."


async def test_a_message_gets_a_streamed_answer(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text(SLOW_ANSWER, chunks=6, delay=0.4))
    await chat.send("count for me")
    await expect(chat.messages("user")).to_have_text("count for me")
    live = chat.streaming()
    await expect(chat.answer_text(live)).not_to_be_empty()
    await expect(chat.by_testid("stop-button")).to_be_visible()
    first = (await chat.answer_text(live).text_content() or "").strip()
    assert first and SLOW_ANSWER.startswith(first) and first != SLOW_ANSWER
    # The same message grows while it is still streaming.
    grown = await chat.page.wait_for_function(
        """(shown) => {
          const live = document.querySelector('[data-testid="message"][data-streaming="true"]');
          const text = live ? live.querySelector('.markdown').textContent.trim() : '';
          return text.length > shown.length ? text : null;
        }""",
        arg=first,
    )
    assert SLOW_ANSWER.startswith(await grown.json_value())
    answer = chat.messages("assistant")
    await expect(answer).to_have_count(1)
    await expect(answer).not_to_have_attribute("data-streaming", "true")
    await expect(chat.answer_text(answer)).to_have_text(SLOW_ANSWER)
    # The model that answered is named under the answer, live as after a reload.
    await expect(answer.locator(".message-meta")).to_have_text("openai/test-model15 tokens")
    await expect(chat.by_testid("stop-button")).to_be_hidden()
    await expect(chat.by_testid("session-item")).to_contain_text("count for me")


async def test_a_tool_call_shows_as_a_card_with_status_and_duration(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    args = json.dumps({"path": "notes/todo.md", "content": "- buy milk"})
    model_server.script(Reply.tool_calls(("write_file", args)), Reply.text("Saved your list."))
    await chat.send("write my list down")
    card = chat.by_testid("tool-card")
    await expect(card).to_have_attribute("data-status", "ok")
    await expect(card.locator(".tool-name")).to_have_text("write_file")
    await expect(card.locator(".tool-status")).to_have_text("OK")
    await expect(card.locator(".tool-duration")).to_have_text(re.compile(r"^\d+(\.\d+)? m?s$"))
    await expect(card.locator(".tool-preview")).to_have_text("notes/todo.md")
    await card.locator("summary").click()
    await expect(card.locator(".tool-args")).to_contain_text('"content": "- buy milk"')
    await expect(card.locator(".tool-result")).to_be_visible()
    await expect(chat.answer_text(chat.messages("assistant"))).to_have_text("Saved your list.")
    written = chat.daemon.settings.workspace / "notes" / "todo.md"
    assert written.read_text(encoding="utf-8") == "- buy milk"
    await expect(chat.by_testid("session-item")).to_have_count(1)


async def test_the_stop_button_ends_a_slow_answer_and_keeps_what_was_said(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text(SLOW_ANSWER, chunks=12, delay=1.0))
    await chat.send("count very slowly")
    live = chat.streaming()
    await expect(chat.answer_text(live)).not_to_be_empty()
    await chat.by_testid("stop-button").click()
    stopped = chat.page.locator('[data-testid="notice"][data-kind="cancelled"]')
    await expect(stopped).to_have_text("Stopped.")
    await expect(chat.by_testid("stop-button")).to_be_hidden()
    answer = chat.messages("assistant")
    await expect(answer).not_to_have_attribute("data-streaming", "true")
    partial = (await chat.answer_text(answer).text_content() or "").strip()
    assert partial and SLOW_ANSWER.startswith(partial) and partial != SLOW_ANSWER
    # The daemon kept the same partial answer, and a reload shows it from there.
    records = await chat.daemon.context.runtime.sessions.messages(await chat.session_id())
    said = [r for r in records if r["type"] == "assistant"]
    assert [r["text"].strip() for r in said] == [partial]
    assert records[-1]["type"] == "note" and records[-1]["text"] == "Cancelled."
    await chat.reload()
    await expect(chat.answer_text(chat.messages("assistant"))).to_have_text(partial)
    await expect(chat.by_testid("notice")).to_have_text("Stopped.")  # as it said live


async def test_the_step_limit_notice_follows_what_the_model_wrote(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    chat.daemon.settings.agent.max_iterations = 2
    folders = itertools.count()
    model_server.responder = lambda body: Reply.tool_calls(
        ("list_dir", json.dumps({"path": f"f{next(folders)}"})), text="Still looking."
    )
    await chat.send("find my file")
    notice = chat.page.locator('[data-testid="notice"][data-code="step_limit"]')
    await expect(notice).to_contain_text("this request used all its steps")
    await expect(chat.by_testid("stop-button")).to_be_hidden()
    # What the model wrote stays as it streamed: no extra copy of it from the turn's end.
    await expect(chat.messages("assistant")).to_have_count(2)
    await expect(chat.answer_text(chat.messages("assistant").last)).to_have_text("Still looking.")
    await chat.reload()
    await expect(notice).to_contain_text("this request used all its steps")


async def test_a_reload_shows_the_conversation_again(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    args = json.dumps({"path": "plan.txt", "content": "Kyoto in May"})
    model_server.script(
        Reply.text("Kyoto in May sounds lovely."),
        Reply.tool_calls(("write_file", args)),
        Reply.text("I wrote the plan to plan.txt."),
    )
    await chat.send("I want to visit Kyoto in May")
    await expect(chat.answer_text(chat.messages("assistant"))).to_have_text(
        "Kyoto in May sounds lovely."
    )
    await chat.send("save that plan")
    await expect(chat.messages("assistant")).to_have_count(2)
    await expect(chat.messages("assistant").last).not_to_have_attribute("data-streaming", "true")
    await chat.reload()
    await expect(chat.messages("user")).to_have_text(
        ["I want to visit Kyoto in May", "save that plan"]
    )
    await expect(chat.answer_text(chat.messages("assistant"))).to_have_text(
        ["Kyoto in May sounds lovely.", "I wrote the plan to plan.txt."]
    )
    card = chat.by_testid("tool-card")
    await expect(card).to_have_attribute("data-status", "ok")
    await expect(card.locator(".tool-name")).to_have_text("write_file")
    await expect(chat.by_testid("session-item")).to_have_count(1)


async def test_the_ui_switches_to_chinese_and_stays_so(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    await expect(chat.by_testid("send-button")).to_have_text("Send")
    await chat.by_testid("lang-switch").select_option("zh-CN")
    await expect(chat.page.locator("html")).to_have_attribute("lang", "zh-CN")
    await expect(chat.by_testid("send-button")).to_have_text("发送")
    await expect(chat.by_testid("nav-settings")).to_have_text("设置")
    await expect(chat.by_testid("new-session")).to_have_text("新对话")
    await expect(chat.by_testid("conn-state")).to_have_text("已连接")
    composer = chat.by_testid("composer-input")
    await expect(composer).to_have_attribute("placeholder", "给 CountBot 发消息…")
    model_server.script(Reply.text("你好！", chunks=1))
    await chat.send("你好")
    await expect(chat.answer_text(chat.messages("assistant"))).to_have_text("你好！")
    await chat.reload()
    await expect(chat.by_testid("send-button")).to_have_text("发送")
    await expect(chat.by_testid("lang-switch")).to_have_value("zh-CN")
    # After a turn (which re-labels the placeholder) and a switch back, every name is English.
    model_server.script(Reply.text("Hi!", chunks=1))
    await chat.send("hi")
    await expect(chat.answer_text(chat.messages("assistant").nth(1))).to_have_text("Hi!")
    await chat.by_testid("lang-switch").select_option("en")
    await expect(composer).to_have_attribute("aria-label", "Message")
    await expect(chat.page.get_by_role("textbox", name="Message")).to_be_visible()


async def test_markup_from_the_model_is_shown_as_text_never_run(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    hostile = (
        "Here is **bold** and `code`.\n\n"
        "<script>window.injected = 'script'; alert('script')</script>\n\n"
        "<img src=\"x\" onerror=\"window.injected = 'img'; alert('img')\">\n\n"
        "[click me](javascript:alert('link'))\n\n"
        "```html\n<iframe src=\"javascript:alert('frame')\"></iframe>\n```"
    )
    model_server.script(Reply.text(hostile, chunks=5))
    await chat.send("show me some HTML")
    answer = chat.messages("assistant")
    await expect(answer).not_to_have_attribute("data-streaming", "true")
    body = chat.answer_text(answer)
    await expect(body).to_contain_text("<script>window.injected = 'script'")
    await expect(body).to_contain_text('<img src="x" onerror=')
    await expect(body.locator("strong")).to_have_text("bold")
    await expect(body.locator("pre code")).to_contain_text("<iframe src=")
    for tag in ("script", "img", "iframe", "a"):
        await expect(body.locator(tag)).to_have_count(0)
    await chat.reload()  # the same answer rendered again from history
    await expect(chat.answer_text(answer).locator("strong")).to_have_text("bold")
    for tag in ("script", "img", "iframe", "a"):
        await expect(chat.answer_text(answer).locator(tag)).to_have_count(0)
    assert await chat.page.evaluate("window.injected === undefined")
    assert chat.dialogs == []
