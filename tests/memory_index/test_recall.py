"""Auto-recall's relevance rule on a real index: what a message is about decides, not one word it
shares with an old conversation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from countbot.memory_index.index import MemoryIndex
from countbot.memory_index.recall import AutoRecall
from countbot.store.database import Database
from countbot.store.sessions import SessionStore

OLD = {
    "cron:backup": [
        "Run the nightly cron job that backs up the photos folder.",
        "The cron backup finished: 212 files copied to the NAS.",
    ],
    "greet": ["Hello!", "Hello! How can I help you today?"],
    "diary": [
        "I reviewed weekend plans again, for the third time. (#5425)",
        "我对青霉素过敏。",
        "Grandma's birthday is on 2 August; she loves orchids.",
    ],
}


@pytest.fixture
async def recall(tmp_path: Path) -> AsyncIterator[AutoRecall]:
    (tmp_path / "workspace").mkdir()
    db = await Database.open(tmp_path / "countbot.db")
    sessions = SessionStore(db)
    for session_id, texts in OLD.items():
        for n, text in enumerate(texts):
            record = {"type": "user", "content": text} if n % 2 == 0 else None
            await sessions.append(session_id, record or {"type": "assistant", "text": text})
    index = await MemoryIndex.open(tmp_path / "index.db", tmp_path / "workspace", sessions, None)
    try:
        yield AutoRecall(index)
    finally:
        await index.close()
        await db.close()


@pytest.mark.parametrize(
    "message",
    [
        "hello",
        "Hello there!",
        "你好",
        "thanks, that's all for now",
        "2+2?",
        "What is 17 times 23?",
        "How do I write a cron expression for every five minutes?",
        "Help me plan a birthday party for a six year old.",
    ],
)
async def test_a_message_sharing_one_common_word_recalls_nothing(
    recall: AutoRecall, message: str
) -> None:
    assert await recall.recall(message, "now") is None


@pytest.mark.parametrize(
    ("message", "recalled"),
    [
        ("Did the nightly cron backup of the photos finish?", "212 files copied"),
        ("我对什么过敏？", "青霉素"),
        ("Hello! When is grandma's birthday?", "2 August"),
    ],
)
async def test_a_message_about_what_was_said_recalls_it(
    recall: AutoRecall, message: str, recalled: str
) -> None:
    part = await recall.recall(message, "now")
    assert part is not None and recalled in part.text
