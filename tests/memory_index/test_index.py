"""The memory index on real SQLite files: what it finds, how it keeps up, and kill -9."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from countbot.memory_index import index_db
from countbot.memory_index.index import MemoryIndex
from countbot.store.database import Database
from countbot.store.sessions import SessionStore

ROOT = Path(__file__).resolve().parents[2]


class Memory:
    """A workspace, a store and an index over them (full-text only: vectors are the bench's)."""

    def __init__(self, root: Path, sessions: SessionStore, index: MemoryIndex) -> None:
        self.workspace = root / "workspace"
        self.sessions = sessions
        self.index = index

    async def texts(self, query: str, **filters: object) -> list[str]:
        return [hit.text for hit in await self.index.search(query, **filters)]


@pytest.fixture
async def memory(tmp_path: Path) -> AsyncIterator[Memory]:
    (tmp_path / "workspace").mkdir()
    db = await Database.open(tmp_path / "countbot.db")
    sessions = SessionStore(db)
    index = await MemoryIndex.open(tmp_path / "index.db", tmp_path / "workspace", sessions, None)
    try:
        yield Memory(tmp_path, sessions, index)
    finally:
        await index.close()
        await db.close()


async def test_chinese_one_and_two_character_terms_and_english_are_found(memory: Memory) -> None:
    (memory.workspace / "MEMORY.md").write_text(
        "# Memory\n\n## 2026-03-02\n\n- 我的牙医是王医生\n- My dentist is Dr. Okafor\n"
        "- 周末去爬山\n",
        encoding="utf-8",
    )
    assert await memory.texts("牙医") == ["- 我的牙医是王医生"]
    assert await memory.texts("山") == ["- 周末去爬山"]  # one character
    assert await memory.texts("Who is my DENTIST?") == ["- My dentist is Dr. Okafor"]
    (hit,) = await memory.index.search("王医生")
    assert hit.citation() == "2026-03-02 · MEMORY.md L5"


async def test_a_note_holding_more_of_the_question_comes_before_one_rare_word(
    memory: Memory,
) -> None:
    """BM25 puts the entry of the one rare word first ("boiler"); the one that answers the
    question holds two of its three content words, and the fusion weighs each full-text hit by
    that share."""
    lines = [f"- the garden fence was painted in autumn, note {i}" for i in range(20)]
    lines += [f"- the car was serviced at the garage, note {i}" for i in range(20)]
    answer = "- the heating is serviced every autumn by Kowalski and Sons, on a Tuesday"
    lines += ["- boiler", answer]
    (memory.workspace / "MEMORY.md").write_text("\n".join(lines), encoding="utf-8")

    hits = await memory.index.search("When is the boiler serviced in autumn?", limit=2)

    assert [(hit.text, hit.text_rank) for hit in hits] == [(answer, 2), ("- boiler", 1)]


async def test_a_rare_word_finds_its_note_among_thousands_sharing_the_common_ones(
    memory: Memory,
) -> None:
    """Words most entries hold are left out of the query when a rarer one is there (ranking
    their every match would cost in proportion to the index): the rare word still finds its
    entry, and the one holding the common words too comes first. A question of common words
    (and a word nothing holds) still finds entries: their newest."""
    common = index_db.COMMON_ENTRIES * 2
    lines = [f"- the garden password word was changed, note {i}" for i in range(common)]
    answer = "- the garden password word is marigold"
    lines += ["- marigold", answer]
    (memory.workspace / "MEMORY.md").write_text("\n".join(lines), encoding="utf-8")

    hits = await memory.index.search("What is the garden password word? marigold?", limit=3)
    assert [hit.text for hit in hits[:2]] == [answer, "- marigold"]

    newest = set([line for line in lines if "garden" in line][-index_db.COMMON_ENTRIES :])
    found = await memory.texts("the garden password word, xyzzy?", limit=20)
    assert len(found) == 20
    assert newest.issuperset(found)


async def test_a_committed_message_and_an_edited_file_are_indexed_incrementally(
    memory: Memory,
) -> None:
    notes = memory.workspace / "memory"
    notes.mkdir()
    (notes / "2026-05-01.md").write_text("- The plumber comes on Friday\n", encoding="utf-8")
    await memory.sessions.append("tg:1", {"type": "user", "content": "Book the ferry to Hydra"})
    (hit,) = await memory.index.search("ferry")
    assert hit.kind == "conversation" and hit.session_id == "tg:1"
    assert hit.citation().endswith("(session tg:1, m1)")
    assert await memory.texts("plumber", since=None) == ["- The plumber comes on Friday"]

    (notes / "2026-05-01.md").write_text("- The electrician comes on Friday\n", encoding="utf-8")
    assert await memory.texts("plumber") == []
    assert await memory.texts("electrician") == ["- The electrician comes on Friday"]
    assert await memory.texts("ferry", kinds=("note",)) == []

    await memory.sessions.delete("tg:1")
    assert await memory.texts("ferry") == []


async def test_a_date_range_narrows_the_search(memory: Memory) -> None:
    from datetime import date

    (memory.workspace / "MEMORY.md").write_text(
        "## 2025-01-10\n\n- Paid the tax bill\n\n## 2026-01-10\n\n- Paid the water bill\n",
        encoding="utf-8",
    )
    found = await memory.texts("bill", since=date(2026, 1, 1))
    assert found == ["- Paid the water bill"]
    assert await memory.texts("bill", until=date(2025, 12, 31)) == ["- Paid the tax bill"]


WRITER = """
import asyncio, sys
from pathlib import Path
from countbot.memory_index import index_db
from countbot.memory_index.index import MemoryIndex
from countbot.store.database import Database
from countbot.store.sessions import SessionStore

async def main(root):
    db = await Database.open(root / "countbot.db")
    sessions = SessionStore(db)
    index = await MemoryIndex.open(root / "index.db", root / "workspace", sessions, None)
    n = 0
    while True:
        n += 1
        await sessions.append(f"s{n % 7}", {"type": "user", "content": f"note number {n} kiwi"})
        await index.sync_messages()
        if n == 50:
            print("ready", flush=True)

asyncio.run(main(Path(sys.argv[1])))
"""


async def test_after_kill_9_the_index_catches_up_without_gaps_or_copies(tmp_path: Path) -> None:
    (tmp_path / "workspace").mkdir()
    writer = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        WRITER,
        str(tmp_path),
        stdout=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert writer.stdout is not None
        assert (await writer.stdout.readline()).strip() == b"ready"
        await asyncio.sleep(0.3)  # killed mid-write: between a commit and the next catch-up
    finally:
        writer.send_signal(signal.SIGKILL)
        await writer.wait()
    db = await Database.open(tmp_path / "countbot.db")
    index = await MemoryIndex.open(
        tmp_path / "index.db", tmp_path / "workspace", SessionStore(db), None
    )
    try:
        await index.catch_up()
        messages = await db.run(lambda c: c.execute("SELECT count(*) FROM messages").fetchone()[0])
        rows = await db.run(lambda c: c.execute("SELECT id FROM messages").fetchall())
        assert messages > 50
        assert await index.search("kiwi")  # and it answers
    finally:
        await index.close()
        await db.close()
    with sqlite3.connect(tmp_path / "index.db") as conn:
        located = sorted(int(r[0][1:]) for r in conn.execute("SELECT locator FROM entries"))
        fts = conn.execute("SELECT count(*) FROM entries_fts").fetchone()[0]
    assert located == sorted(r[0] for r in rows)  # each message once, none missing
    assert fts == len(located)


def test_countbot_memory_rebuild_indexes_the_files_and_the_store(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "MEMORY.md").write_text("- Likes green tea\n", encoding="utf-8")
    config = tmp_path / "config.yaml"
    config.write_text(
        f"workspace: {workspace}\ndata_dir: {tmp_path / 'data'}\nmemory:\n  embeddings: 'off'\n",
        encoding="utf-8",
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "countbot", "memory", "rebuild", "--config", str(config)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Memory index rebuilt: 1 entries." in done.stdout, (
        done.stdout,
        time.monotonic() - started,
    )


def test_countbot_memory_search_finds_notes_and_says_when_nothing_is_found(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "MEMORY.md").write_text("- Likes green tea\n- Cat is called Miso\n")
    config = tmp_path / "config.yaml"
    config.write_text(
        f"workspace: {workspace}\ndata_dir: {tmp_path / 'data'}\nmemory:\n  embeddings: 'off'\n",
        encoding="utf-8",
    )

    def search(*words: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "countbot", "memory", "search", *words, "--config", str(config)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=120,
        )

    async def forwarded() -> None:
        db = await Database.open(tmp_path / "data" / "countbot.db")
        forward = {"kind": "forward", "via": "telegram"}
        record = {"type": "user", "content": "Vet memo", "author": forward, "ts": time.time()}
        await SessionStore(db).append("telegram:1", record)
        await db.close()

    asyncio.run(forwarded())
    found = search("Miso")
    assert found.returncode == 0, found.stderr
    assert "MEMORY.md L2" in found.stdout and "Cat is called Miso" in found.stdout
    assert "green tea" not in found.stdout and "written by" not in found.stdout
    memo = search("vet memo")
    assert "[written by a message forwarded on telegram]" in memo.stdout, memo.stderr
    nothing = search("aubergine", "--scope", "conversations")
    assert nothing.returncode == 0 and "Nothing found for 'aubergine'." in nothing.stdout


async def test_two_processes_catching_up_at_once_index_each_message_once(tmp_path: Path) -> None:
    (tmp_path / "workspace").mkdir()
    db = await Database.open(tmp_path / "countbot.db")
    sessions = SessionStore(db)
    for n in range(1200):
        await sessions.append(f"s{n % 3}", {"type": "user", "content": f"note {n} mango"})
    # Two indexes on one file, each with its own connection: the daemon and a CLI beside it.
    indexes = [
        await MemoryIndex.open(tmp_path / "index.db", tmp_path / "workspace", sessions, None)
        for _ in range(2)
    ]
    try:
        await asyncio.gather(*(index.sync_messages() for index in indexes))
    finally:
        for index in indexes:
            await index.close()
        await db.close()
    with sqlite3.connect(tmp_path / "index.db") as conn:
        located = [row[0] for row in conn.execute("SELECT locator FROM entries")]
    assert len(located) == len(set(located)) == 1200


async def test_a_search_finds_other_sessions_records_at_once_and_its_own_later(
    memory: Memory,
) -> None:
    """A turn's recall leaves its own session out, so it need not wait for that session's newest
    records; another session's, or any session's for an unrestricted search, are found at once."""
    user = {"type": "user", "images": [], "context": "", "ts": time.time()}
    await memory.sessions.append("mine", {**user, "content": "the ferry leaves at nine"})
    await memory.sessions.append("other", {**user, "content": "the ferry costs four euros"})
    found = await memory.index.search("ferry", exclude_session="mine")
    assert [hit.text for hit in found] == ["User: the ferry costs four euros"]
    assert sorted(await memory.texts("ferry")) == [
        "User: the ferry costs four euros",
        "User: the ferry leaves at nine",
    ]


async def test_leaving_a_session_out_leaves_out_exactly_that_session(memory: Memory) -> None:
    """The session is left out inside the full-text query, by a token of its id: ids that are
    prefixes of each other, end like English suffixes or are not ASCII stay apart, and notes
    (no session) are never left out."""
    (memory.workspace / "MEMORY.md").write_text("- The ferry timetable is pinned\n")
    user = {"type": "user", "images": [], "context": "", "ts": time.time()}
    sessions = ["telegram:4", "telegram:42", "made", "mad", "会话", "a b"]
    for session in sessions:
        await memory.sessions.append(session, {**user, "content": f"ferry for {session}"})
    for left_out in sessions:
        found = await memory.index.search("ferry", limit=20, exclude_session=left_out)
        assert sorted(hit.session_id or "note" for hit in found) == sorted(
            ["note", *(s for s in sessions if s != left_out)]
        )


async def test_an_index_file_of_the_first_schema_is_migrated_with_its_entries(
    tmp_path: Path,
) -> None:
    """The session column is added by copying the indexed texts: entries, ids and searches
    stay, and the session can be left out at once."""
    path = tmp_path / "index.db"
    old = await Database.open(path, index_db.MIGRATIONS[:1])

    def fill(conn: sqlite3.Connection) -> None:
        for entry_id, session in ((1, "tg:1"), (2, "tg:2"), (3, None)):
            conn.execute(
                "INSERT INTO entries (id, kind, source, locator, ts, text, session_id, digest)"
                " VALUES (?, 'conversation', 's', ?, 0, 'the ferry', ?, ?)",
                (entry_id, f"m{entry_id}", session, str(entry_id)),
            )
            conn.execute(
                "INSERT INTO entries_fts (rowid, body) VALUES (?, 'the ferry')", (entry_id,)
            )

    await old.run(fill)
    await old.close()
    db = await Database.open(path, index_db.MIGRATIONS[:2])
    try:
        filters = index_db.Filters(exclude_session="tg:1")
        found = await db.run(index_db.search_text, ['"ferry"'], filters, 10)
        assert sorted(entry_id for entry_id, _ in found) == [2, 3]
    finally:
        await db.close()


async def test_the_follower_indexes_a_burst_once_it_settles_and_closes_while_waiting(
    memory: Memory,
) -> None:
    memory.index.start()
    user = {"type": "user", "images": [], "context": "", "ts": time.time()}
    for n in range(3):
        await memory.sessions.append("s", {**user, "content": f"burst number {n}"})

    def indexed() -> int:  # read from the file, as another process would: no search catches up
        with sqlite3.connect(memory.workspace.parent / "index.db") as conn:
            return int(conn.execute("SELECT count(*) FROM entries").fetchone()[0])

    for _ in range(100):
        if await asyncio.to_thread(indexed) == 3:
            break
        await asyncio.sleep(0.05)
    assert await asyncio.to_thread(indexed) == 3
    await memory.sessions.append("s", {**user, "content": "one more"})
    await asyncio.wait_for(memory.index.close(), 5)  # while it waits for the store to settle


async def test_blocking_work_runs_on_the_index_thread_and_still_runs_once_it_closed(
    tmp_path: Path,
) -> None:
    """The system prompt's look rides on the index's thread (`run_blocking`); a turn that
    finishes while the daemon closes the index still gets its look."""
    (tmp_path / "workspace").mkdir()
    db = await Database.open(tmp_path / "countbot.db")
    index = await MemoryIndex.open(
        tmp_path / "index.db", tmp_path / "workspace", SessionStore(db), None
    )
    try:
        here = threading.get_ident()
        assert await index.run_blocking(threading.get_ident) != here
        await index.close()
        assert await index.run_blocking(lambda: "looked") == "looked"
    finally:
        await db.close()
