"""Auto-recall's relevance rule on a real index: what a message is about decides, not one word it
shares with an old conversation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from countbot.memory_index.embeddings import (
    minilm_available,
    offline_embedder,
    offline_model_available,
)
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


# A year's notes in miniature: the school times among notes on other things of daily life.
SCHOOL = "The kids' school starts at 8:15 and pickup is at 15:30."
DAILY = [
    SCHOOL,
    "We planned the kitchen renovation over the weekend.",
    "I sketched ideas for a recipe for lentil soup while waiting for the bus.",
    "The car needs new winter tyres before December.",
    "Paid the electricity bill online; it was higher than last month.",
    "Watched a documentary about volcanoes in Iceland.",
    "The team retro moved to Thursday afternoon.",
    "Bought seeds for tomatoes and basil for the balcony.",
    "Lena recommended a novel about a lighthouse keeper.",
    "The printer in the study is out of cyan ink again.",
]


@pytest.fixture
async def read_by_meaning(tmp_path: Path) -> AsyncIterator[tuple[AutoRecall, AutoRecall]]:
    """Auto-recall over the same notes with the offline ensemble and with USE alone."""
    if not offline_model_available() or not minilm_available():
        pytest.skip("the memory extra's models are not installed")
    opened = []
    for name, embedder in (("both", offline_embedder()), ("use", offline_embedder(ensemble=False))):
        (tmp_path / name / "workspace").mkdir(parents=True)
        notes = "".join(f"- {note}\n" for note in DAILY)
        (tmp_path / name / "workspace" / "MEMORY.md").write_text(notes, encoding="utf-8")
        db = await Database.open(tmp_path / name / "countbot.db")
        index = await MemoryIndex.open(
            tmp_path / name / "index.db", tmp_path / name / "workspace", SessionStore(db), embedder
        )
        index.start()
        await asyncio.wait_for(index.vectors_ready(), 60.0)
        opened.append((index, db))
    try:
        yield AutoRecall(opened[0][0]), AutoRecall(opened[1][0])
    finally:
        for index, db in opened:
            await index.close()
            await db.close()


async def test_a_paraphrased_question_recalls_its_fact_and_other_messages_get_no_block(
    read_by_meaning: tuple[AutoRecall, AutoRecall],
) -> None:
    """ "What time must the children be dropped off?" shares no word with the note; USE alone is
    unsure of it (below its cut: no block), MiniLM, asked as a second opinion, puts it alone at
    its top: recalled. Messages about something else get nothing from the second reader."""
    both, use_alone = read_by_meaning
    question = "What time must the children be dropped off?"
    part = await both.recall(question, "now")
    assert part is not None and "8:15" in part.text
    assert await use_alone.recall(question, "now") is None
    for message in ("Say hello in Japanese.", "How does a heat pump work?", "Explain decorators."):
        assert await both.recall(message, "now") is None, message


async def test_the_second_opinion_comes_for_the_first_message_a_new_worker_reads(
    tmp_path: Path,
) -> None:
    """A worker started after the notes were embedded has never read a text with MiniLM when the
    paraphrase comes first thing (a message after a quiet spell): it is recalled all the same,
    not only once some turn's entries happened to load MiniLM."""
    if not offline_model_available() or not minilm_available():
        pytest.skip("the memory extra's models are not installed")
    (tmp_path / "workspace").mkdir()
    notes = "".join(f"- {note}\n" for note in DAILY)
    (tmp_path / "workspace" / "MEMORY.md").write_text(notes, encoding="utf-8")
    db = await Database.open(tmp_path / "countbot.db")
    try:
        for opening in ("embeds the notes", "reads them back"):
            index = await MemoryIndex.open(
                tmp_path / "index.db", tmp_path / "workspace", SessionStore(db), offline_embedder()
            )
            try:
                index.start()
                await asyncio.wait_for(index.vectors_ready(), 60.0)
                if opening == "reads them back":
                    part = await AutoRecall(index).recall(
                        "What time must the children be dropped off?", "now"
                    )
                    assert part is not None and "8:15" in part.text
            finally:
                await index.close()
    finally:
        await db.close()
