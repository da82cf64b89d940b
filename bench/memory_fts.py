"""Does full-text search stay as fast as the memory index grows? The full-text side of a search.

BM25 scores every entry a query matches, so a query of every word OR'd costs in proportion to
the entries sharing any of them: with months of chat, the common words match most of the index.
`index_db.search_text` leaves out the terms more than `COMMON_ENTRIES` entries hold when a rarer
one is there. This bench times that call with auto-recall's filters (its session left out, the
owner's entries only) at a growing index: the generated year of bench/memory_recall.py plus
chats repeating a few words (as the agents' property run does: "the garden password word?
canary-a-chat12"), a third of the entries. The baseline in the same run is the query before:
every term OR'd, all matches ranked. Figures: docs/memory_recall.md.

    python bench/memory_fts.py [--sizes 1000 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.memory_recall import bulk_messages, open_year, questions
from bench.memory_recall_data import UNRELATED, filler
from countbot.memory_index import index_db
from countbot.memory_index.index_db import Filters
from countbot.memory_index.search import CANDIDATES, MAX_QUERY_CHARS
from countbot.memory_index.text import query_terms
from countbot.store.sessions import SessionStore

CHAT = "the garden password word? canary-{agent}-chat{n}"
FILTERS = Filters(exclude_session="bench-turn", owner_only=True)


def every_term(conn: sqlite3.Connection, terms: list[str]) -> list[tuple[int, float]]:
    """The query before: every term OR'd, every match ranked."""
    if not terms:
        return []
    where, params = FILTERS.sql()
    return conn.execute(
        "SELECT f.rowid, f.rank FROM entries_fts f JOIN entries e ON e.id = f.rowid"
        f" WHERE entries_fts MATCH ? AND {where} ORDER BY f.rank LIMIT ?",
        (FILTERS.match(" OR ".join(terms)), *params, CANDIDATES),
    ).fetchall()


def now(conn: sqlite3.Connection, terms: list[str]) -> list[tuple[int, float]]:
    return index_db.search_text(conn, terms, FILTERS, CANDIDATES)


def timed(
    conn: sqlite3.Connection,
    search: Callable[[sqlite3.Connection, list[str]], object],
    messages: list[str],
) -> tuple[float, float]:
    """Median and p95 ms over three rounds of `messages`."""
    times = []
    for _ in range(3):
        for message in messages:
            start = time.perf_counter()
            search(conn, query_terms(message))
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95)]


async def index_at(root: Path, entries: int) -> tuple[Path, dict[str, list[str]]]:
    """A year of `entries` plus a chat of half as many messages; the messages to time."""
    year, index, db, _ = await open_year(root, entries, None)
    chat = [
        (f"chat{n // 10}", "web", "user", {"type": "user", "content": text, "ts": time.time()})
        for n in range(entries // 2)
        for text in [CHAT.format(agent="abc"[n % 3], n=n)]
    ]
    await bulk_messages(SessionStore(db), chat)
    while await index.sync_messages():
        pass
    await index.close()
    await db.close()
    messages = {
        "word questions": [q for _, q, _, _ in questions(year, ("word",))],
        "paraphrases": [q for _, q, _, _ in questions(year, ("paraphrase",))],
        "unrelated": [m for _, m in UNRELATED],
        "chat's own kind": [CHAT.format(agent=a, n=n) for a in "abc" for n in range(0, 300, 37)],
        "pasted text": [
            " ".join(filler(rng, chinese=False) for _ in range(40))[:MAX_QUERY_CHARS]
            for rng in map(random.Random, range(10))
        ],
    }
    return root / "index.db", messages


async def main(sizes: list[int]) -> None:
    print("| entries | messages | every term OR'd (before): median / p95 ms | now | ratio |")
    print("|---:|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            path, kinds = await index_at(Path(tmp) / str(size), size)
            conn = sqlite3.connect(path)
            count = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
            for kind, messages in kinds.items():
                before = timed(conn, every_term, messages)
                after = timed(conn, now, messages)
                print(
                    f"| {count:,} | {kind} | {before[0]:.2f} / {before[1]:.2f}"
                    f" | {after[0]:.2f} / {after[1]:.2f} | {after[0] / before[0]:.2f} |"
                )
            conn.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    asyncio.run(main(parser.parse_args().sizes))
