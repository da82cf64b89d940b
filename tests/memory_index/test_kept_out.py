"""Conversations kept out of memory: by their own switch, their channel's or their job's setting
they are neither indexed nor recalled into, and switching one off forgets what it held."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from countbot.memory_index.index import MemoryIndex
from countbot.memory_index.recall import AutoRecall
from countbot.memory_index.scope import KeptOut
from countbot.store.database import Database
from countbot.store.sessions import SessionStore


class Memory:
    def __init__(self, sessions: SessionStore, index: MemoryIndex) -> None:
        self.sessions = sessions
        self.index = index
        self.recall = AutoRecall(index)

    async def say(self, session_id: str, text: str) -> None:
        await self.sessions.append(session_id, {"type": "user", "content": text})

    async def found(self, query: str) -> list[str]:
        return [hit.text for hit in await self.index.search(query)]


@pytest.fixture
async def memory(tmp_path: Path) -> AsyncIterator[Memory]:
    (tmp_path / "workspace").mkdir()
    db = await Database.open(tmp_path / "countbot.db")
    sessions = SessionStore(db)
    kept_out = KeptOut(channels=frozenset({"email"}), jobs=frozenset({"digest"}))
    index = await MemoryIndex.open(
        tmp_path / "index.db", tmp_path / "workspace", sessions, None, kept_out
    )
    try:
        yield Memory(sessions, index)
    finally:
        await index.close()
        await db.close()


async def test_a_chat_switched_off_is_forgotten_not_indexed_and_not_recalled_into(
    memory: Memory,
) -> None:
    await memory.say("diary", "The spare key is under the blue heron statue")
    await memory.say("private", "My salary review is with the heron committee")
    assert len(await memory.found("heron")) == 2
    # Recalled into while on (its answer remembered across its messages), then switched off.
    assert await memory.recall.recall("Where is the heron statue key?", "private") is not None
    await memory.say("private", "Thanks")

    assert await memory.sessions.set_memory_off("private", True)
    assert await memory.found("heron") == ["User: The spare key is under the blue heron statue"]
    await memory.say("private", "The walrus budget is secret")
    assert await memory.found("walrus") == []  # not indexed while off
    assert await memory.recall.recall("Where is the heron statue key?", "private") is None
    part = await memory.recall.recall("Where is the heron statue key?", "other")
    assert part is not None and "blue heron statue" in part.text
    info = await memory.sessions.get("private")
    assert info is not None and info.memory_off

    assert await memory.sessions.set_memory_off("private", False)  # in again, from now on
    await memory.say("private", "The walrus moved to Friday")
    assert await memory.found("walrus") == ["User: The walrus moved to Friday"]
    assert not await memory.sessions.set_memory_off("nowhere", True)


async def test_a_private_channels_and_jobs_conversations_stay_out_of_memory(
    memory: Memory,
) -> None:
    await memory.sessions.ensure("email:boss@example.com", channel="email")
    await memory.say("email:boss@example.com", "Quarterly pelican numbers attached")
    await memory.say("cron:digest", "Digest run: pelican news")
    await memory.say("cron:backup", "Backup run: pelican photos copied")
    assert await memory.found("pelican") == ["User: Backup run: pelican photos copied"]
    assert await memory.recall.recall("pelican photos backup", "cron:digest") is None
    part = await memory.recall.recall("pelican photos backup", "web-chat")
    assert part is not None and "pelican photos copied" in part.text
