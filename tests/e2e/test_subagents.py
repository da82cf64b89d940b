"""Subagents in the browser: the running list under the chat, its stop button, the report."""

from __future__ import annotations

from playwright.async_api import expect

from tests.e2e.ui import ChatPage
from tests.subagents.script import Conversations, spawn
from tests.support.scripted_model import Reply, ScriptedModelServer


async def test_a_running_subagent_shows_under_the_chat_and_its_report_follows(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Get the weather", "weather")), Reply.text("On it.")])
    conv.subagent("weather", Reply.text("**Sunny** and 21 degrees.", chunks=3, delay=0.8))
    model_server.responder = conv
    await chat.send("What's the weather? Ask a helper.")
    running = chat.by_testid("subagent")
    # Longer than the default: a fresh daemon's first turn waits for litellm's import.
    await expect(running).to_have_count(1, timeout=60_000)
    await expect(running).to_have_attribute("data-status", "running")
    await expect(running).to_contain_text("weather")
    await expect(running).to_contain_text("Working")
    in_sidebar = chat.by_testid("session-item").filter(has_text="Subagent: weather")
    await expect(in_sidebar).to_contain_text("Subagent of")
    # It ends: the list empties, the report shows in the chat (the subagent's words in their own
    # rendered bubble, not the user's) and the assistant relays it; a reload shows the same.
    await expect(running).to_have_count(0)
    await expect(chat.by_testid("subagents")).to_be_hidden()
    for _ in range(2):
        report = chat.by_testid("report").last
        await expect(report).to_contain_text("Subagent report: weather")
        await expect(report.locator("strong")).to_have_text("Sunny")
        await expect(report.locator("button")).to_have_count(0)
        await expect(chat.messages("user")).to_have_count(1)
        relayed = chat.answer_text(chat.messages("assistant").last)
        await expect(relayed).to_have_text("Relayed: weather")
        await chat.reload()


async def test_the_stop_button_cancels_a_subagent(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Count sheep", "sheep")), Reply.text("Counting.")])
    conv.subagent("sheep", Reply.hang(30))
    model_server.responder = conv
    await chat.send("Count sheep in the background")
    first = chat.answer_text(chat.messages("assistant").first)
    await expect(first).to_have_text("Counting.", timeout=60_000)
    # After a reload the running subagent is still listed (loaded over REST).
    await chat.reload()
    running = chat.by_testid("subagent")
    await expect(running).to_have_attribute("data-status", "running")
    await running.get_by_test_id("subagent-stop").click()
    await expect(running).to_have_count(0)
    await expect(chat.by_testid("report").last).to_contain_text("was cancelled")
    await expect(chat.answer_text(chat.messages("assistant").last)).to_have_text("Relayed: sheep")


async def test_the_subagents_page_lists_them_with_their_report(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Get the weather", "weather")), Reply.text("On it.")])
    conv.subagent("weather", Reply.text("Sunny and 21 degrees."))
    model_server.responder = conv
    await chat.send("What's the weather? Ask a helper.")
    await expect(chat.answer_text(chat.messages("assistant").last)).to_have_text(
        "Relayed: weather", timeout=60_000
    )
    await chat.by_testid("nav-subagents").click()
    item = chat.by_testid("subagent-item")
    await expect(item).to_have_attribute("data-status", "done")
    await expect(item).to_contain_text("Get the weather")
    await item.locator("summary").click()
    await expect(item.get_by_test_id("subagent-result")).to_contain_text("Sunny and 21 degrees.")
    await chat.screenshot("subagents_page_en")
    await chat.by_testid("lang-switch").select_option("zh-CN")
    await expect(item).to_contain_text("已完成")
    await chat.screenshot("subagents_page_zh")
    await item.get_by_role("button", name="启动它的对话").click()
    await expect(chat.messages("user").first).to_have_text("What's the weather? Ask a helper.")
