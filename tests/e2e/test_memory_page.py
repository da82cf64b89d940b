"""The Memory page in Chromium: search notes and past conversations, open one, see recalls."""

from __future__ import annotations

from playwright.async_api import expect

from tests.e2e.ui import ChatPage
from tests.support.scripted_model import Reply, ScriptedModelServer


async def test_memory_page_searches_opens_the_conversation_and_shows_recalls(
    chat: ChatPage, model_server: ScriptedModelServer
) -> None:
    await chat.daemon.context.runtime.memory.write("# Memory\n\n## 2026-02-01\n\n- 喜欢喝绿茶\n")
    model_server.script(Reply.text("Noted."), Reply.text("Dr. Okafor."))
    await chat.send("My dentist is Dr. Okafor at the Riverside clinic.")
    await expect(chat.messages("assistant")).to_have_count(1)
    first = await chat.session_id()
    await chat.by_testid("new-session").click()
    await chat.send("Who is my dentist again?")  # auto-recall brings the first chat's fact
    await expect(chat.messages("assistant")).to_contain_text(["Dr. Okafor."])

    await chat.by_testid("nav-memory").click()
    await chat.by_testid("memory-search-input").fill("dentist")
    await chat.by_testid("memory-search-scope").select_option("conversations")
    await chat.by_testid("memory-search-go").click()
    # The user's own words: every hit of that chat names it by its title (its first message).
    hit = chat.by_testid("memory-hit").filter(has_text="User: My dentist is Dr. Okafor")
    await expect(hit).to_contain_text(f"session {first}")
    await expect(hit.get_by_test_id("memory-hit-author")).to_have_count(0)
    # A message someone forwarded on Telegram is labelled as not the user's words.
    forward = {"kind": "forward", "via": "telegram"}
    record = {"type": "user", "content": "The dentist moved", "author": forward, "ts": 1.0}
    await chat.daemon.context.runtime.sessions.append("telegram:9", record)
    await chat.by_testid("memory-search-go").click()
    moved = chat.by_testid("memory-hit").filter(has_text="The dentist moved")
    author = moved.get_by_test_id("memory-hit-author")
    await expect(author).to_have_text("Not written by you: a message forwarded on telegram")

    await chat.by_testid("memory-search-input").fill("绿茶")
    await chat.by_testid("memory-search-scope").select_option("all")
    await chat.by_testid("memory-search-go").click()
    tea = chat.by_testid("memory-hit").filter(has_text="喜欢喝绿茶")
    await expect(tea).to_contain_text("2026-02-01 · MEMORY.md L5")

    await chat.page.locator(".memory-recalled summary").click()
    recall = chat.by_testid("memory-recall").first
    await expect(recall).to_contain_text("Who is my dentist again?")
    await expect(recall).to_contain_text("Dr. Okafor")
    await chat.screenshot("memory_page_search_and_recalls")

    await chat.by_testid("memory-search-input").fill("dentist")
    await chat.by_testid("memory-search-go").click()
    await hit.get_by_test_id("memory-open-conversation").click()
    await expect(chat.messages("user").first).to_contain_text("My dentist is Dr. Okafor")
    assert await chat.session_id() == first
