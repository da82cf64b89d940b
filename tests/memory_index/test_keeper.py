"""When new entries get their vectors: in the pauses of a stream of turns, or once the first has
waited `EMBED_MAX_LAG`, on a real index with the offline model in its worker process.

A stream (webhook deliveries, one turn after another) keeps the cores for its turns; until it
pauses, what it stored is found by its words and not yet by its meaning. The stream here is a
record every 0.2 s; the quiet moment is stretched to 1.5 s so a slow machine's pauses between
records never look like the stream's end.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from countbot.memory_index import vector_keeper
from countbot.memory_index.embeddings import offline_embedder, offline_model_available
from countbot.memory_index.index import MemoryIndex
from countbot.store.database import Database
from countbot.store.sessions import SessionStore

FERRY = "The ferry to Hydra leaves at noon from pier 7."
FERRY_ASKED = "When does the boat to the island depart?"
DENTIST = "My dentist appointment moved to Thursday at 9."
DENTIST_ASKED = "When do I see the doctor for my teeth?"


class Stream:
    """An index over a store, and records written into it the way turns write them."""

    def __init__(self, index: MemoryIndex, sessions: SessionStore) -> None:
        self.index = index
        self.sessions = sessions
        self.records = 0

    async def say(self, session: str, text: str) -> None:
        record = {"type": "user", "content": text, "images": [], "context": "", "ts": time.time()}
        await self.sessions.append(session, record)

    async def turn(self) -> None:
        """One turn of the stream: a record, then the 0.2 s until the next one."""
        self.records += 1
        await self.say("hooks", f"build {self.records} of the nightly pipeline passed")
        await asyncio.sleep(0.2)

    async def found(self, question: str, fact: str) -> bool:
        """Whether searching `question` (no word in common with `fact`) finds it."""
        return any(fact in hit.text for hit in await self.index.search(question, limit=5))


@pytest.fixture
async def stream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Stream]:
    if not offline_model_available():
        pytest.skip("the memory extra's offline model is not installed")
    monkeypatch.setattr(vector_keeper, "EMBED_QUIET", 1.5)
    (tmp_path / "workspace").mkdir()
    db = await Database.open(tmp_path / "countbot.db")
    sessions = SessionStore(db)
    index = await MemoryIndex.open(
        tmp_path / "index.db", tmp_path / "workspace", sessions, offline_embedder(ensemble=False)
    )
    try:
        index.start()
        await asyncio.wait_for(index.vectors_ready(), 60.0)
        yield Stream(index, sessions)
    finally:
        await index.close()
        await db.close()


async def until_found(stream: Stream, question: str, fact: str, *, streaming: bool) -> bool:
    """Search until `fact` is found (True), for at most 30 s; a turn of the stream between
    searches while `streaming`."""
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        if await stream.found(question, fact):
            return True
        await (stream.turn() if streaming else asyncio.sleep(0.2))
    return False


async def test_a_stream_of_turns_gets_its_vectors_in_its_pause(stream: Stream) -> None:
    await stream.say("mail", FERRY)
    for _ in range(15):  # 3 s of turns: the fact is indexed (by its words) but not embedded
        await stream.turn()
        assert not await stream.found(FERRY_ASKED, FERRY)
    assert await stream.index.search("Hydra pier", limit=5)  # its words find it all along

    assert await until_found(stream, FERRY_ASKED, FERRY, streaming=False)


async def test_a_stream_longer_than_the_lag_gets_its_vectors_while_it_goes_on(
    stream: Stream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_keeper, "EMBED_MAX_LAG", 2.0)
    await stream.turn()  # the keeper waits with this lag from the stream's first entry
    await stream.say("mail", DENTIST)

    # Found while the turns keep coming: the stream never pauses for the quiet moment.
    assert await until_found(stream, DENTIST_ASKED, DENTIST, streaming=True)
