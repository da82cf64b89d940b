"""Daily chat in the browser: the working indicator, and one truth for a turn's token count."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import CHROMIUM
from tests.e2e.ui import ChatPage
from tests.support.scripted_model import Reply, ScriptedModelServer

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)

# Records every phase the working indicator showed, in order (also several in one task).
WATCH_PHASES = """() => {
  window.phases = [];
  const el = document.querySelector('[data-testid="working"]');
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.oldValue !== null) window.phases.push(record.oldValue);
    }
  }).observe(el, { attributeFilter: ['data-phase'], attributeOldValue: true });
}"""


def script_list_turn(chat: ChatPage, model_server: ScriptedModelServer, **answer: Any) -> None:
    """A turn that reads todo.md with a tool, then answers (with `answer`'s pacing)."""
    (chat.daemon.settings.workspace / "todo.md").write_text("- buy milk", encoding="utf-8")
    call = Reply.tool_calls(("read_file", json.dumps({"path": "todo.md"})), text="Let me look.")
    model_server.script(call, Reply.text("You still need milk.", **answer))


async def test_a_turn_shows_what_it_is_doing_until_it_ends(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    script_list_turn(chat, model_server, chunks=2, delay=1.5)
    await chat.page.evaluate(WATCH_PHASES)
    await chat.send("what is on my list?")
    working = chat.by_testid("working")
    # A sign of life while the model has said nothing yet, counting the seconds of the turn.
    await expect(working).to_be_visible()
    await expect(working).to_have_attribute("data-phase", "waiting")
    await expect(working).to_contain_text("Waiting for the model")
    await expect(chat.by_testid("working-elapsed")).to_contain_text("1 s")
    answer = chat.answer_text(chat.messages("assistant").last)
    await expect(answer).to_have_text("You still need milk.")
    await expect(working).to_be_hidden()
    phases = await chat.page.evaluate("window.phases")
    # Waiting, (writing "Let me look."), running the tool, waiting again, writing the answer.
    order = iter(phases)
    assert all(phase in order for phase in ("waiting", "tool", "waiting", "writing")), phases


async def test_a_turns_token_count_is_the_same_live_and_after_a_reload(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    script_list_turn(chat, model_server)
    await chat.send("what is on my list?")
    answers = chat.messages("assistant")
    await expect(answers.last.locator(".markdown")).to_have_text("You still need milk.")
    meta = answers.last.locator(".message-meta")
    await expect(meta).to_contain_text("tokens")
    live = await meta.text_content()
    await chat.reload()
    await expect(chat.messages("assistant").last.locator(".message-meta")).to_have_text(live or "")
    # The turn's count is shown once, under its answer, not per model call.
    await expect(chat.page.locator(".message.assistant .message-meta:not(:empty)")).to_have_count(1)


async def test_copy_regenerate_and_edit_replace_the_conversations_tail(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    await chat.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    model_server.script(
        Reply.text("A **first** answer."),
        Reply.text("A second answer."),
        Reply.text("An answer in metres."),
    )
    await chat.send("how tall is the tower?")
    answer = chat.messages("assistant")
    await expect(chat.answer_text(answer)).to_have_text("A first answer.")
    await answer.get_by_test_id("message-copy").click()
    await expect(chat.by_testid("toast")).to_have_text("Copied.")
    # The markdown as the model wrote it, not the rendered text.
    assert await chat.page.evaluate("navigator.clipboard.readText()") == "A **first** answer."

    await answer.get_by_test_id("message-regenerate").click()
    await expect(chat.answer_text(chat.messages("assistant"))).to_have_text("A second answer.")
    await expect(chat.messages("user")).to_have_text(["how tall is the tower?"])

    await chat.messages("user").get_by_test_id("message-edit").click()
    await chat.by_testid("message-edit-input").fill("how tall is the tower, in metres?")
    await chat.by_testid("message-edit-send").click()
    await expect(chat.answer_text(chat.messages("assistant"))).to_have_text("An answer in metres.")
    # The model saw only the edited question: the replaced turns left its context.
    last = model_server.requests[-1]["messages"]
    said = [m["content"] for m in last if m["role"] == "user"]
    assert said[-1].endswith("how tall is the tower, in metres?")
    assert not any("A second answer." in str(m.get("content")) for m in last)
    # And the stored history, after a reload, is the same conversation.
    await chat.reload()
    await expect(chat.messages("user")).to_have_text(["how tall is the tower, in metres?"])
    await expect(chat.answer_text(chat.messages("assistant"))).to_have_text("An answer in metres.")


async def test_an_answer_without_text_says_why_and_retry_asks_again(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text(""), Reply.text("Why did the chicken cross the road?"))
    await chat.send("tell me a joke")
    notice = chat.page.locator('[data-code="empty_answer"]')
    await expect(notice).to_contain_text("The model ended its turn without writing an answer.")
    await notice.get_by_test_id("notice-retry").click()
    answer = chat.answer_text(chat.messages("assistant").last)
    await expect(answer).to_have_text("Why did the chicken cross the road?")
    await expect(chat.messages("user")).to_have_text(["tell me a joke"])
    await expect(notice).to_have_count(0)  # the retried turn replaced the empty one
