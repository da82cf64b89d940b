"""Forgetting that forgets: a rewind, a deleted session and `memory_forget` leave nothing of the
removed words to find, after a kill between the store's change and the index's too."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from countbot.memory_index.index import MemoryIndex
from countbot.memory_index.recall import AutoRecall
from countbot.store.database import Database
from countbot.store.sessions import SessionStore
from tests.memory_index.test_daemon import say, user_text, vectors_caught_up
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon

ROOT = Path(__file__).resolve().parents[2]

# Writes a conversation, indexes it, then makes one change in the store and is killed before
# the index applies it (the listener only marks it pending; the follower never got to run).
KILLED = """
import asyncio, os, signal, sys
from pathlib import Path
from countbot.memory_index.index import MemoryIndex
from countbot.store.database import Database
from countbot.store.sessions import SessionStore

async def main(root, change):
    db = await Database.open(root / "countbot.db")
    sessions = SessionStore(db)
    index = await MemoryIndex.open(root / "index.db", root / "workspace", sessions, None)
    await sessions.append("chat", {"type": "user", "content": "Plant the walnut tree in spring"})
    await sessions.append("chat", {"type": "assistant", "text": "Spring it is."})
    second = await sessions.append("chat", {"type": "user", "content": "My badge is quokka 7781"})
    await sessions.append("chat", {"type": "assistant", "text": "Noted, quokka 7781."})
    await sessions.append("other", {"type": "user", "content": "Water the walnut sapling"})
    await index.sync_messages()
    if change == "rewind":
        assert await sessions.rewind("chat", second) == ""
    elif change == "delete":
        assert await sessions.delete("chat")
    else:  # memory_forget's first step (MemoryIndex.forget logs it, then applies it)
        await sessions.forget_text("QUOKKA")
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
"""


def indexed_texts(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [row[0] for row in conn.execute("SELECT text FROM entries ORDER BY id")]


@pytest.mark.parametrize("change", ["rewind", "delete", "forget"])
async def test_a_kill_between_the_stores_change_and_the_index_brings_nothing_back(
    tmp_path: Path, change: str
) -> None:
    (tmp_path / "workspace").mkdir()
    killed = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        KILLED,
        str(tmp_path),
        change,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert await killed.wait() == -9
    # The index file still holds the words: only the store's forget log knows they are gone.
    assert any("quokka" in text for text in indexed_texts(tmp_path / "index.db"))

    db = await Database.open(tmp_path / "countbot.db")
    index = await MemoryIndex.open(
        tmp_path / "index.db", tmp_path / "workspace", SessionStore(db), None
    )
    try:
        assert await index.search("quokka 7781") == []  # the first search applies the log
        kept = [hit.text for hit in await index.search("walnut")]
    finally:
        await index.close()
        await db.close()
    assert not [text for text in indexed_texts(tmp_path / "index.db") if "quokka" in text]
    expected = {
        "rewind": ["User: Plant the walnut tree in spring", "User: Water the walnut sapling"],
        "delete": ["User: Water the walnut sapling"],
        "forget": ["User: Plant the walnut tree in spring", "User: Water the walnut sapling"],
    }[change]
    assert sorted(kept) == expected


async def test_what_is_said_after_a_rewind_stays_through_a_rebuild(tmp_path: Path) -> None:
    (tmp_path / "workspace").mkdir()
    db = await Database.open(tmp_path / "countbot.db")
    sessions = SessionStore(db)
    index = await MemoryIndex.open(tmp_path / "index.db", tmp_path / "workspace", sessions, None)
    try:
        first = await sessions.append("chat", {"type": "user", "content": "The ferry is at noon"})
        await index.search("ferry")  # indexed
        assert await sessions.rewind("chat", first) == ""
        await sessions.append("chat", {"type": "user", "content": "The ferry is at ten"})
        await sessions.append("gone", {"type": "user", "content": "The ferry was cancelled"})
        assert await sessions.delete("gone")
        await sessions.append("gone", {"type": "user", "content": "A ferry to Hydra"})
        found = sorted(hit.text for hit in await index.search("ferry"))
        await index.rebuild()  # the forget log is applied again from its start: nothing more
        rebuilt = sorted(hit.text for hit in await index.search("ferry"))
    finally:
        await index.close()
        await db.close()
    assert found == rebuilt == ["User: A ferry to Hydra", "User: The ferry is at ten"]


REMOVED = ("5150", "wombat", "quince", "marmot")


async def test_edit_regenerate_delete_and_stop_leave_nothing_to_find_or_recall(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    model_server.script(
        Reply.text("Noted: the locker code is 5150."),
        Reply.text("Noted: your badge is wombat."),
        Reply.text("Regenerated: badge wombat noted."),
        Reply.text("Fine."),
        Reply.text("Noted the quince jam."),
        Reply.text("Once a marmot. " * 4, chunks=4, delay=0.5),
        Reply.text("Nothing of that."),
    )
    client = await daemon.ws()
    frame = {"type": "message", "session_id": "first"}
    await client.send({**frame, "content": "My locker code is 5150."})
    await client.until("done")
    await client.send({**frame, "content": "My badge is wombat."})
    await client.until("done", 2)
    users = [r for r in await stored(daemon, "first") if r["type"] == "user"]
    await vectors_caught_up(daemon)  # indexed, vectors too, before they are taken back
    assert await searched(daemon, "wombat") and await searched(daemon, "5150")
    # Regenerate the second answer, then edit the first message: nothing of either is left.
    await client.send({**frame, "content": "My badge is wombat.", "replace_from": users[1]["id"]})
    await client.until("done", 3)
    await client.send({**frame, "content": "Hello.", "replace_from": users[0]["id"]})
    await client.until("done", 4)
    await say(daemon, "jam", "I make quince jam every October.")
    assert await searched(daemon, "quince")
    await client.close()
    # A stopped answer is not remembered either.
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": "stopped", "content": "Tell me a story."})
    await client.until("stream")
    await client.send({"type": "cancel", "session_id": "stopped"})
    await client.until("cancelled")
    await client.close()
    (partial,) = [r for r in await stored(daemon, "stopped") if r["type"] == "assistant"]
    assert "marmot" in partial["text"] and partial["stop_reason"] == "cancelled"
    async with daemon.http() as http:
        assert (await http.delete("/api/sessions/jam")).status_code in (200, 204)
        found = [
            hit["text"]
            for query in (*REMOVED, "locker code", "badge", "jam", "story", "fruit preserves")
            for hit in (await http.get("/api/memory/search", params={"q": query})).json()["hits"]
        ]
        recalls = (await http.get("/api/memory/recalls")).text  # the Memory page's list
    assert found and not [text for text in found if any(word in text for word in REMOVED)]
    assert not [word for word in REMOVED if word in recalls]
    await say(daemon, "later", "What was my locker code, my badge, my jam or the story?")
    asked = user_text(model_server.requests[-1])
    assert not [word for word in REMOVED if word in asked]


async def searched(daemon: Daemon, word: str) -> list[str]:
    """The texts of memory_search's hits for `word` that hold it."""
    async with daemon.http() as http:
        hits = (await http.get("/api/memory/search", params={"q": word})).json()["hits"]
    return [hit["text"] for hit in hits if word in hit["text"]]


async def stored(daemon: Daemon, session_id: str) -> list[dict]:
    async with daemon.http() as http:
        page = (await http.get(f"/api/sessions/{session_id}/messages")).json()
    return page["messages"]


async def test_the_memory_pages_recalls_forget_with_the_conversation(tmp_path: Path) -> None:
    (tmp_path / "workspace").mkdir()
    db = await Database.open(tmp_path / "countbot.db")
    sessions = SessionStore(db)
    index = await MemoryIndex.open(tmp_path / "index.db", tmp_path / "workspace", sessions, None)
    recall = AutoRecall(index)
    try:
        await sessions.append("told", {"type": "user", "content": "The walnut gate code is 7781"})
        await sessions.append("asked", {"type": "user", "content": "Before that: the ferry"})
        asked = await sessions.append("asked", {"type": "user", "content": "Gate code, walnut?"})
        part = await recall.recall("What is the walnut gate code?", "asked")
        assert part is not None and "7781" in part.text
        await sessions.append("other", {"type": "user", "content": "The heron gate is blue"})
        assert await recall.recall("Which gate code is the walnut one?", "other") is not None
        assert "7781" in json.dumps(await index.recalls(None))

        assert await sessions.rewind("asked", asked) == ""  # that turn, and what it recalled
        assert [r["session_id"] for r in await index.recalls(None)] == ["other"]
        assert await sessions.delete("told")  # and what was recalled from it, anywhere
        assert "7781" not in json.dumps(await index.recalls(None))
    finally:
        await index.close()
        await db.close()
