"""Does memory find what the user said months ago? Recall, auto-recall, speed and update cost.

A generated year (bench/memory_recall_data.py): 60 facts (a third Chinese) hidden among filler
notes in MEMORY.md and chat messages in the store, at least 5,000 entries, a fifth Chinese. Half
the facts are notes, half were said in a conversation. Every fact has a question sharing a
content word with it and a paraphrase sharing none. Measured in one run:

1. recall@5 of `memory_search` per question kind and language, for the keyword search the
   assistant had before the index (`memory/search.py` over MEMORY.md: every word must occur; it
   cannot see conversations) as the baseline, the index full-text only, the index with the
   offline model's vectors (USE multilingual v3) and, when the `wordllama` package is
   installed, with the former model's (bench/memory_recall_wordllama.py); the vectors and the
   model live in the index's vector worker, a process of its own, for every row;
2. auto-recall: the share of questions whose fact is in the block put into the request, and the
   block's tokens (counted with gpt-4o's tokenizer, offline; the budget itself uses an estimate);
3. search latency at 100,000 entries (median, p95), the vectors' memory in the worker, the
   worker's RSS, and what starting it again costs (reading the vectors, loading the model: the
   first search after it ended when idle) at 1,000 and 100,000 entries; what each model costs in
   memory (the worker's own, and what the searching process gains: nothing, it never imports
   numpy);
4. index update per committed entry (a message appended, then caught up).

    python bench/memory_recall.py [--entries 5000] [--large 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import memory_recall_wordllama as wordllama
from bench.memory_recall_data import (
    COMMON_WORD_SESSIONS,
    FACTS_EN,
    FACTS_ZH,
    HELD_OUT_2_EN,
    HELD_OUT_2_ZH,
    HELD_OUT_3_EN,
    HELD_OUT_3_ZH,
    HELD_OUT_EN,
    HELD_OUT_ZH,
    UNRELATED,
    filler,
)
from countbot.llm.token_counter import count_text
from countbot.memory.search import search_notes
from countbot.memory_index.embeddings import (
    Embedder,
    minilm_available,
    offline_embedder,
    offline_model_available,
)
from countbot.memory_index.index import MemoryIndex
from countbot.memory_index.recall import AutoRecall
from countbot.memory_index.text import STOPWORDS, estimate_recall_tokens
from countbot.store.database import Database
from countbot.store.sessions import SessionStore

YEAR = 365 * 86400
CHANNELS = ("web", "telegram", "feishu", "email")
_WORD = re.compile(r"[a-z0-9]+")
_CJK = re.compile(r"[\u4e00-\u9fff]+")


def stems(text: str) -> set[str]:
    """Content-word stems (first five letters) and Chinese character pairs, for the leak check."""
    words = {w[:5] for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 1}
    pairs = {run[i : i + 2] for run in _CJK.findall(text) for i in range(len(run) - 1)}
    return words | pairs


def keywords(question: str) -> str:
    """What a model passes to today's keyword search: content words (Chinese as asked)."""
    words = [w for w in _WORD.findall(question.lower()) if w not in STOPWORDS and len(w) > 1]
    return " ".join(words + _CJK.findall(question))


def check_paraphrases() -> list[str]:
    """Paraphrases (the first and the held-out) that share a stem or character pair with their
    fact (should be none)."""
    facts = [fact for fact, _, _ in FACTS_EN + FACTS_ZH]
    held = list(zip(facts, HELD_OUT_EN + HELD_OUT_ZH, strict=True))
    held += zip(facts, HELD_OUT_2_EN + HELD_OUT_2_ZH, strict=True)
    held += zip(facts, HELD_OUT_3_EN + HELD_OUT_3_ZH, strict=True)
    pairs = [(fact, para) for fact, _word_q, para in FACTS_EN + FACTS_ZH] + held
    return [para for fact, para in pairs if stems(fact) & stems(para)]


class Year:
    """One generated year written into a workspace and a store."""

    def __init__(self, root: Path, entries: int, seed: int = 7) -> None:
        self.root = root
        self.workspace = root / "workspace"
        self.entries = entries
        self.rng = random.Random(seed)
        self.start = time.time() - YEAR
        self.facts = [(f, w, p, "en") for f, w, p in FACTS_EN] + [
            (f, w, p, "zh") for f, w, p in FACTS_ZH
        ]
        facts = [f[0] for f in self.facts]
        self.held_out = dict(zip(facts, HELD_OUT_EN + HELD_OUT_ZH, strict=True))
        self.held_out_2 = dict(zip(facts, HELD_OUT_2_EN + HELD_OUT_2_ZH, strict=True))
        self.held_out_3 = dict(zip(facts, HELD_OUT_3_EN + HELD_OUT_3_ZH, strict=True))

    async def write(self, sessions: SessionStore) -> None:
        """Notes (40%) into MEMORY.md under date headings, messages (60%) into the store."""
        self.workspace.mkdir(parents=True, exist_ok=True)
        notes = int(self.entries * 0.4)
        lines = self._items(notes, [f for i, f in enumerate(self.facts) if i % 2 == 0])
        days: dict[str, list[str]] = {}
        for ts, text in lines:
            days.setdefault(time.strftime("%Y-%m-%d", time.localtime(ts)), []).append(text)
        body = ["# Memory", ""]
        for day in sorted(days):
            body += [f"## {day}", "", *(f"- {t}" for t in days[day]), ""]
        (self.workspace / "MEMORY.md").write_text("\n".join(body), encoding="utf-8")
        said = self._items(self.entries - notes, [f for i, f in enumerate(self.facts) if i % 2])
        rows = []
        for n, (ts, text) in enumerate(said):
            session = f"s{n // 10}"
            kind = "user" if n % 2 == 0 else "assistant"
            key = "content" if kind == "user" else "text"
            channel = CHANNELS[(n // 10) % len(CHANNELS)]
            rows.append((session, channel, kind, {"type": kind, key: text, "ts": ts}))
        for session, channel, texts in COMMON_WORD_SESSIONS:
            ts = self.start + self.rng.random() * YEAR
            for n, text in enumerate(texts):
                kind, key = ("user", "content") if n % 2 == 0 else ("assistant", "text")
                rows.append((session, channel, kind, {"type": kind, key: text, "ts": ts + n}))
        await bulk_messages(sessions, rows)

    def _items(self, count: int, facts: list) -> list[tuple[float, str]]:
        items = [(self.start + self.rng.random() * YEAR, fact[0]) for fact in facts]
        while len(items) < count:
            ts = self.start + self.rng.random() * YEAR
            items.append((ts, filler(self.rng, chinese=self.rng.random() < 0.2)))
        self.rng.shuffle(items)
        return sorted(items)

    def memory_text(self) -> str:
        return (self.workspace / "MEMORY.md").read_text(encoding="utf-8")


async def bulk_messages(sessions: SessionStore, rows: list[tuple[str, str, str, dict]]) -> None:
    """Many records in one transaction each 1,000 (a bench shortcut; the daemon appends one)."""
    import json

    def insert(conn, chunk):  # type: ignore[no-untyped-def]
        for session, channel, kind, record in chunk:
            conn.execute(
                "INSERT OR IGNORE INTO sessions (id, title, channel, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (session, session, channel, record["ts"], record["ts"]),
            )
            conn.execute(
                "INSERT INTO messages (session_id, type, record) VALUES (?, ?, ?)",
                (session, kind, json.dumps(record, ensure_ascii=False)),
            )

    for i in range(0, len(rows), 1000):
        await sessions._db.run(insert, rows[i : i + 1000])


def use_alone() -> Embedder:
    """The offline model before the ensemble: USE multilingual alone."""
    return offline_embedder(ensemble=False)


# The searches measured: (row name, the embedder it uses or None for full-text only).
MODES: list[tuple[str, Callable[[], Embedder] | None]] = [("index, full-text only", None)]
if wordllama.available():
    MODES.append(("index + WordLlama (former)", wordllama.embedder))
if offline_model_available():
    MODES.append(("index + USE multilingual", use_alone))
    if minilm_available():
        MODES.append(("index + USE + MiniLM (default)", offline_embedder))


async def open_year(
    root: Path, entries: int, embedder: Embedder | None
) -> tuple[Year, MemoryIndex, Database, float]:
    """The year written and indexed, its vectors made; and ms per entry the vectors took."""
    year = Year(root, entries)
    db = await Database.open(root / "countbot.db")
    sessions = SessionStore(db)
    await year.write(sessions)
    index = await MemoryIndex.open(root / "index.db", year.workspace, sessions, embedder)
    await index.catch_up()
    start = time.perf_counter()
    if embedder is not None:
        index.start()
        await index.vectors_ready()
    count = (await index.status())["entries"]
    return year, index, db, (time.perf_counter() - start) * 1000 / int(count)


KINDS = ("word", "paraphrase", "held-out", "held-out 2", "held-out 3")


def questions(year: Year, kinds: tuple[str, ...] = KINDS):  # type: ignore[no-untyped-def]
    for fact, word_q, para_q, lang in year.facts:
        asked = {
            "word": word_q,
            "paraphrase": para_q,
            "held-out": year.held_out[fact],
            "held-out 2": year.held_out_2[fact],
            "held-out 3": year.held_out_3[fact],
        }
        for kind in kinds:
            yield fact, asked[kind], kind, lang


async def recall_at_5(year: Year, index: MemoryIndex | None) -> dict[tuple[str, str], float]:
    found: dict[tuple[str, str], list[bool]] = {}
    memory = year.memory_text()
    for fact, question, kind, lang in questions(year):
        if index is None:  # the model's keywords: the question's content words
            texts = [hit.text for hit in search_notes(memory, keywords(question), 5)]
        else:
            texts = [hit.text for hit in await index.search(question, limit=5)]
        found.setdefault((kind, lang), []).append(any(fact in t for t in texts))
    return {key: sum(v) / len(v) for key, v in found.items()}


async def auto_recall(
    year: Year, index: MemoryIndex
) -> tuple[dict[str, float], float, float, int, int]:
    """(share with the fact in the block per question kind, the same over the bench's word and
    first paraphrase questions, median and max tokens by gpt-4o's tokenizer, max tokens by the
    estimate the budget uses)."""
    hit: dict[str, list[bool]] = {}
    tokens, estimates = [], []
    for n, (fact, question, kind, _lang) in enumerate(questions(year)):
        # A session of its own per question: what was recalled into a session is remembered
        # (in the index), and a fact recalled for one question is not repeated for the next.
        part = await AutoRecall(index).recall(question, f"bench-question-{n}")
        block = part.text if part is not None else None
        hit.setdefault(kind, []).append(block is not None and fact in block)
        tokens.append(count_text(block, "gpt-4o") if block else 0)
        estimates.append(estimate_recall_tokens(block) if block else 0)
    shares = {kind: sum(v) / len(v) for kind, v in hit.items()}
    bench = hit["word"] + hit["paraphrase"]
    return shares, sum(bench) / len(bench), statistics.median(tokens), max(tokens), max(estimates)


async def precision(index: MemoryIndex) -> dict[str, tuple[int, int, float]]:
    """Auto-recall on messages with nothing relevant stored: per kind (and "all"), how many
    messages, how many got a block, and the tokens it added (gpt-4o's), averaged over all."""
    found: dict[str, list[int]] = {}
    for n, (kind, message) in enumerate(UNRELATED):
        part = await AutoRecall(index).recall(message, f"bench-unrelated-{n}")
        tokens = count_text(part.text, "gpt-4o") if part is not None else -1
        found.setdefault(kind, []).append(tokens)
        found.setdefault("all", []).append(tokens)
    return {
        kind: (len(v), sum(t >= 0 for t in v), sum(max(t, 0) for t in v) / len(v))
        for kind, v in found.items()
    }


def print_precision(name: str, table: dict[str, tuple[int, int, float]]) -> None:
    print(f"\n{name}: auto-recall on messages with nothing relevant stored")
    print("| messages        | count | with a block | tokens added, mean over all |")
    print("|-----------------|------:|-------------:|----------------------------:|")
    for kind, (count, blocks, tokens) in table.items():
        print(f"| {kind:<15} | {count:5} | {blocks:12} | {tokens:27.0f} |")
    print("(targets: at most 1 in 10 with a block, at most 150 tokens on average)")


async def update_cost(index: MemoryIndex, db: Database, n: int = 200) -> float:
    """Median ms to index one newly committed message (the follower's catch-up step)."""
    sessions = SessionStore(db)
    times = []
    for i in range(n):
        await sessions.append(
            "bench-live",
            {"type": "user", "content": filler(random.Random(i), i % 5 == 0), "ts": time.time()},
        )
        start = time.perf_counter()
        await index.sync_messages()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


async def latency(year: Year, index: MemoryIndex) -> tuple[float, float]:
    times = []
    for _ in range(3):
        for _fact, question, _kind, _lang in questions(year):
            start = time.perf_counter()
            await index.search(question, limit=5)
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95)]


def row(name: str, scores: dict[tuple[str, str], float]) -> str:
    """One table row: per kind and language, then overall per kind (weighted by questions)."""
    cells = [scores[(k, lang)] for k in KINDS for lang in ("en", "zh")]
    total = len(FACTS_EN) + len(FACTS_ZH)
    overall = [
        (scores[(k, "en")] * len(FACTS_EN) + scores[(k, "zh")] * len(FACTS_ZH)) / total
        for k in KINDS
    ]
    return f"| {name:<30} | " + " | ".join(f"{c:5.2f}" for c in [*cells, *overall]) + " |"


def print_table(results: dict[str, dict[tuple[str, str], float]]) -> None:
    print(f"\nrecall@5 of memory_search: {len(FACTS_EN)} English, {len(FACTS_ZH)} Chinese facts")
    print(
        "| search                         | w en  | w zh  | p en  | p zh  | h en  | h zh  "
        "| h2 en | h2 zh | h3 en | h3 zh | word  | para  | held  | held2 | held3 |"
    )
    print("|--------------------------------|" + "-------|" * 15)
    for name, scores in results.items():
        print(row(name, scores))
    print(
        "(w: question shares a word with the fact; p: paraphrase sharing none; h, h2, h3: three"
        " sets of held-out paraphrases, sharing none; h2 written after the ranking change of"
        " issue 36's lane recall, h3 after every rule was chosen, never run before)"
    )


async def small_year(
    tmp: Path, entries: int, name: str, make: Callable[[], Embedder] | None, results: dict
) -> None:
    """Recall, auto-recall and update cost on the year of `entries`."""
    embedder = make() if make else None
    year, index, db, vectors_ms = await open_year(tmp / name, entries, embedder)
    count = (await index.status())["entries"]
    if embedder is None:
        results["baseline: keywords, MEMORY.md"] = await recall_at_5(year, None)
    results[name] = await recall_at_5(year, index)
    shares, share, median_tokens, max_tokens, max_estimate = await auto_recall(year, index)
    unrelated = await precision(index)
    update = await update_cost(index, db)
    if embedder is not None:
        print(f"{name}: vectors {vectors_ms:.3f} ms per entry, in the background (the worker)")
    kinds = ", ".join(f"{kind} {value:.2f}" for kind, value in shares.items())
    print(
        f"{name}: {count} entries; auto-recall brings the fact for {share:.2f} of the bench's "
        f"questions ({kinds}), "
        f"block {median_tokens:.0f} tokens median, {max_tokens} max (gpt-4o's tokenizer; "
        f"the budget's estimate {max_estimate} max); "
        f"index update {update:.2f} ms per committed message (median; vectors follow in batches)"
    )
    print_precision(name, unrelated)
    await index.close()
    await db.close()


async def large_year(
    tmp: Path, entries: int, name: str, make: Callable[[], Embedder] | None
) -> None:
    embedder = make() if make else None
    year, index, db, _ = await open_year(tmp / f"large-{name}", entries, embedder)
    median, p95 = await latency(year, index)
    status = await index.status()
    held = await worker_memory(index) if embedder is not None else "no vector worker"
    print(
        f"{name}, {status['entries']} entries: search median {median:.1f} ms, p95 {p95:.1f} ms;"
        f" {held}"
    )
    if embedder is not None:
        print(f"{name}, {status['entries']} entries: {await restart_cost(year, index)}")
    await index.close()
    await db.close()


async def worker_memory(index: MemoryIndex) -> str:
    """The vectors' memory in the worker and the worker's RSS."""
    worker = index.vectors
    assert worker is not None
    stats = await worker.stats()
    rss = _status_mib(worker.pid, "VmRSS") if worker.pid else 0.0
    return f"vectors in the worker {stats['bytes'] / 1e6:.0f} MB, the worker's RSS {rss:.0f} MiB"


async def restart_cost(year: Year, index: MemoryIndex, rounds: int = 3) -> str:
    """The first search after the worker ended (it starts, reads the vectors, loads the model),
    against a warm one; and the reading of the vectors alone, as the worker timed it."""
    worker = index.vectors
    assert worker is not None
    question = year.facts[0][2]
    cold, reads = [], []
    for _ in range(rounds):
        await worker.restart()
        start = time.perf_counter()
        await index.search(question, limit=5)
        cold.append((time.perf_counter() - start) * 1000)
        reads.append((await worker.stats())["load_seconds"] * 1000)
    start = time.perf_counter()
    await index.search(question, limit=5)
    warm = (time.perf_counter() - start) * 1000
    return (
        f"first search after the worker ended {statistics.median(cold):.0f} ms median of "
        f"{rounds} (warm {warm:.0f} ms), of it reading the vectors "
        f"{statistics.median(reads):.0f} ms"
    )


async def restart_at(tmp: Path, entries: int, name: str, make: Callable[[], Embedder]) -> None:
    year, index, db, _ = await open_year(tmp / f"restart-{entries}-{name}", entries, make())
    count = (await index.status())["entries"]
    print(f"{name}, {count} entries: {await restart_cost(year, index)}")
    await index.close()
    await db.close()


def _status_mib(pid: int, key: str) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(key + r":\s+(\d+)", text)[1]) / 1024  # type: ignore[index]


_PROBE = r"""
import asyncio, importlib, re, sqlite3, ssl, sys
from pathlib import Path
sys.path.insert(0, '.')
from countbot.memory_index.index import MemoryIndex
from countbot.store.database import Database
from countbot.store.sessions import SessionStore
kb = lambda k, pid='self': int(re.search(k + r':\s+(\d+)', open(f'/proc/{pid}/status').read())[1])
before = kb('VmRSS')
async def probe(root, spec):
    module, name = spec.split(':')
    embedder = getattr(importlib.import_module(module), name)()
    (root / 'ws').mkdir()
    lines = [f'- note {i} about the garden, the boiler and the ferry' for i in range(256)]
    (root / 'ws' / 'MEMORY.md').write_text('\n'.join(lines))
    db = await Database.open(root / 'countbot.db')
    index = await MemoryIndex.open(root / 'index.db', root / 'ws', SessionStore(db), embedder)
    index.start()
    await index.vectors_ready()
    await index.search('when does the ferry leave', limit=5)
    pid = index.vectors.pid
    child = (kb('VmRSS', pid), kb('VmHWM', pid))
    print(before / 1024, (kb('VmRSS') - before) / 1024, (kb('VmHWM') - before) / 1024,
          child[0] / 1024, child[1] / 1024, int('numpy' in sys.modules))
    await index.close()
    await db.close()
asyncio.run(probe(Path(sys.argv[1]), sys.argv[2]))
"""
SPECS = {
    "index + WordLlama (former)": "bench.memory_recall_wordllama:embedder",
    "index + USE multilingual": "bench.memory_recall:use_alone",
    "index + USE + MiniLM (default)": "countbot.memory_index.embeddings:offline_embedder",
}


def model_memory(name: str, tmp: Path) -> str:
    """Memory a fresh process gains by indexing 256 notes with the model of row `name` and
    searching once, and its vector worker's (from /proc/*/status: a child's ru_maxrss starts at
    its parent's peak)."""
    root = Path(__file__).resolve().parent.parent
    folder = tmp / f"probe-{len(list(tmp.iterdir()))}"
    folder.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(folder), SPECS[name]],
        capture_output=True,
        text=True,
        cwd=root,
        check=True,
    )
    base, added, peak, child, child_peak, numpy = map(float, done.stdout.split())
    own = f"the searching process gains {added:.0f} MB resident, {peak:.0f} MB at the peak"
    own += " (numpy imported there)" if numpy else " (no numpy)"
    worker = f"; its vector worker holds {child:.0f} MB, {child_peak:.0f} MB at the peak"
    return f"{own}{worker} (to a process of {base:.0f} MB with asyncio, sqlite3, ssl)"


async def main(entries: int, large: int, quick: bool) -> None:
    leaks = check_paraphrases()
    print(f"Paraphrases sharing a content stem or character pair with their fact: {len(leaks)}")
    for leak in leaks:
        print(f"  {leak}")
    results: dict[str, dict[tuple[str, str], float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in MODES:
            await small_year(Path(tmp), entries, name, make, results)
        print_table(results)
        print()
        if quick:
            return
        for name, make in MODES:
            await large_year(Path(tmp), large, name, make)
        for name, make in MODES[1:]:
            assert make is not None
            await restart_at(Path(tmp), 1_000, name, make)
        print()
        for name, _make in MODES[1:]:
            print(f"{name}: indexing 256 notes and searching, {model_memory(name, Path(tmp))}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=5000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument(
        "--quick", action="store_true", help="recall and precision only: no timing at --large"
    )
    args = parser.parse_args()
    asyncio.run(main(args.entries, args.large, args.quick))
