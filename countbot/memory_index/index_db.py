"""The memory index's SQLite file (`data/memory_index.db`) and the SQL run on its thread.

The index is derived data: deleting the file loses nothing, `countbot memory rebuild` makes it
again. Every change is one transaction that also moves the matching cursor (a file's digest,
the last message id read), so after `kill -9` the index is exactly as of its last commit and the
next catch-up continues from there.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from countbot.memory_index.sources import Entry
from countbot.memory_index.text import indexable
from countbot.store.forget_log import Forget

MIGRATIONS: list[str] = [
    """
    CREATE TABLE entries (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        source TEXT NOT NULL,
        locator TEXT NOT NULL,
        ts REAL NOT NULL,
        text TEXT NOT NULL,
        heading TEXT NOT NULL DEFAULT '',
        session_id TEXT,
        channel TEXT,
        title TEXT NOT NULL DEFAULT '',
        digest TEXT NOT NULL
    );
    CREATE INDEX entries_by_source ON entries (source, digest);
    -- Words (porter-stemmed) and single characters of unsegmented scripts: see text.py.
    CREATE VIRTUAL TABLE entries_fts USING fts5 (
        body, tokenize = 'porter unicode61 remove_diacritics 2'
    );
    CREATE TABLE vectors (
        entry_id INTEGER PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        vector BLOB NOT NULL
    );
    CREATE INDEX vectors_by_model ON vectors (model);
    -- Cursors: 'messages_through', 'file:<path>' (digest of the content indexed).
    CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    -- What auto-recall put into each turn, for the Memory page.
    CREATE TABLE recalls (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        ts REAL NOT NULL,
        query TEXT NOT NULL,
        hits TEXT NOT NULL
    );
    CREATE INDEX recalls_by_session ON recalls (session_id, id);
    -- Text the user asked to forget: conversation entries holding it are never indexed again.
    CREATE TABLE forgotten (text TEXT PRIMARY KEY, ts REAL NOT NULL) WITHOUT ROWID;
    """,
    # Each entry's session as one token of its own column (`session_token`), so a search leaves
    # a session out inside the full-text query (NOT) instead of ranking all of its matches
    # first. The texts are copied from the old table as indexed: no Python needed. Through a
    # temporary table rather than `ALTER TABLE ... RENAME`, which re-parses the whole schema
    # and left its work in the daemon's heap (every new instance runs this script).
    """
    CREATE TEMP TABLE fts_copy AS
        SELECT f.rowid AS id, f.body AS body,
            coalesce('s' || hex(e.session_id) || 'x', '') AS session
        FROM entries_fts f JOIN entries e ON e.id = f.rowid;
    DROP TABLE entries_fts;
    CREATE VIRTUAL TABLE entries_fts USING fts5 (
        body, session, tokenize = 'porter unicode61 remove_diacritics 2'
    );
    INSERT INTO entries_fts (rowid, body, session) SELECT id, body, session FROM fts_copy;
    DROP TABLE fts_copy;
    """,
    # Who wrote each entry (`sources.py`; '' for the owner's memory files): conversation entries
    # are indexed again from the store, each with its author (the index is derived data).
    """
    ALTER TABLE entries ADD COLUMN author TEXT NOT NULL DEFAULT '';
    DELETE FROM entries_fts WHERE rowid IN (SELECT id FROM entries WHERE kind = 'conversation');
    DELETE FROM entries WHERE kind = 'conversation';
    DELETE FROM state WHERE key = 'messages_through';
    """,
    # An answer written after its turn read untrusted content is not the owner's (`sources.py`,
    # `_answer_author`): conversation entries are indexed again with that rule.
    """
    DELETE FROM entries_fts WHERE rowid IN (SELECT id FROM entries WHERE kind = 'conversation');
    DELETE FROM entries WHERE kind = 'conversation';
    DELETE FROM state WHERE key = 'messages_through';
    """,
]

# An entry the owner wrote: a memory file's (no author) or an owned author's (authorship.py).
_OWNED = "(e.author = '' OR json_extract(e.author, '$.kind') IN ('owner', 'job'))"
MESSAGES_CURSOR = "messages_through"
# The last row of the store's forget log applied (`countbot/store/forget_log.py`).
FORGETS_CURSOR = "forgets_through"
# Entries a term may be in and still widen a full-text query (`search_text`).
COMMON_ENTRIES = 500
# The most terms a full-text query is made of (its rarest).
QUERY_TERMS = 16
_ROW = "id, kind, source, locator, ts, text, heading, session_id, channel, title, author"


@dataclass(frozen=True, slots=True)
class Row:
    """An indexed entry as stored, with its id."""

    id: int
    kind: str
    source: str
    locator: str
    ts: float
    text: str
    heading: str
    session_id: str | None
    channel: str | None
    title: str
    # Its author's stored form (JSON; '' for the owner's memory files).
    author: str = ""


@dataclass(frozen=True, slots=True)
class Filters:
    """What a search may return: kinds of entry, a date range, sessions left out, and whether
    only what the owner wrote (auto-recall)."""

    kinds: tuple[str, ...] = ("note", "conversation")
    since: float | None = None
    until: float | None = None
    exclude_session: str | None = None
    owner_only: bool = False

    def match(self, expression: str) -> str:
        """The full-text `expression` over the entries' text, the session left out in the same
        query: its entries are never ranked (a months-long chat is one session, and its own
        matches for a message grow with it)."""
        body = f"body : ({expression})"
        if self.exclude_session is None:
            return body
        return f'{body} NOT session : "{session_token(self.exclude_session)}"'

    def sql(self) -> tuple[str, list[Any]]:
        """The SQL conditions on `entries e` besides the session (`match` leaves it out)."""
        clauses = [f"e.kind IN ({', '.join('?' * len(self.kinds))})"]
        params: list[Any] = list(self.kinds)
        if self.since is not None:
            clauses.append("e.ts >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append("e.ts < ?")
            params.append(self.until)
        if self.owner_only:
            clauses.append(_OWNED)
        return " AND ".join(clauses), params

    def wanted(self) -> dict[str, Any]:
        """What the vector worker is sent (`vectors.Wanted`): it knows no authors, so
        `owner_only` is applied to the rows of its hits (`MemoryIndex._ranked`)."""
        return {
            "kinds": self.kinds,
            "since": self.since,
            "until": self.until,
            "exclude_session": self.exclude_session,
        }

    def admits(self, kind: str, ts: float, session_id: str | None) -> bool:
        """The same test in Python, for the vector side."""
        return (
            kind in self.kinds
            and (self.since is None or ts >= self.since)
            and (self.until is None or ts < self.until)
            and (self.exclude_session is None or session_id != self.exclude_session)
        )


def session_token(session_id: str | None) -> str:
    """The `session` column's one token for `session_id` (empty for notes): its UTF-8 in hex
    between two letters, one word to `unicode61` that the porter stemmer leaves alone (no
    suffix it strips ends in "x"), and the same as the migration's `'s' || hex(...) || 'x'`."""
    return f"s{session_id.encode().hex().upper()}x" if session_id is not None else ""


def get_state(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_state(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO state (key, value) VALUES (?, ?)", (key, value))


def replace_source(
    conn: sqlite3.Connection, source: str, entries: Sequence[Entry], cursor: tuple[str, str]
) -> tuple[list[int], list[int]]:
    """Make `source`'s entries equal `entries`, keeping unchanged ones (and their vectors).

    Returns the ids added and removed; sets the `cursor` state in the same transaction.
    """
    set_state(conn, *cursor)  # first: the write lock is taken before anything is read
    existing = dict(
        conn.execute("SELECT digest, id FROM entries WHERE source = ?", (source,)).fetchall()
    )
    wanted = {entry.digest: entry for entry in entries}
    removed = [entry_id for digest, entry_id in existing.items() if digest not in wanted]
    delete_entries(conn, removed)
    added = insert_entries(conn, [e for d, e in wanted.items() if d not in existing])
    return added, removed


def insert_entries(conn: sqlite3.Connection, entries: Iterable[Entry]) -> list[int]:
    ids = []
    for entry in entries:
        (entry_id,) = conn.execute(
            "INSERT INTO entries (kind, source, locator, ts, text, heading, session_id, channel,"
            " title, digest, author) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                entry.kind,
                entry.source,
                entry.locator,
                entry.ts,
                entry.text,
                entry.heading,
                entry.session_id,
                entry.channel,
                entry.title,
                entry.digest,
                "" if entry.kind == "note" else json.dumps(entry.author.record()),
            ),
        ).fetchone()
        body = indexable(f"{entry.heading}\n{entry.text}" if entry.heading else entry.text)
        conn.execute(
            "INSERT INTO entries_fts (rowid, body, session) VALUES (?, ?, ?)",
            (entry_id, body, session_token(entry.session_id)),
        )
        ids.append(entry_id)
    return ids


def delete_entries(conn: sqlite3.Connection, ids: Sequence[int]) -> None:
    for entry_id in ids:
        conn.execute("DELETE FROM entries_fts WHERE rowid = ?", (entry_id,))
        conn.execute("DELETE FROM entries WHERE id = ?", (entry_id,))


def catch_up(
    conn: sqlite3.Connection,
    forgets: Sequence[Forget],
    entries: Sequence[Entry],
    after: int,
    through: int,
) -> tuple[list[int] | None, list[int]]:
    """One step of keeping up with the store: apply `forgets` (rows of its forget log), then
    index `entries`, the records after message `after` through `through`. Returns the ids
    added (None if another process had moved the cursor: see `add_messages`) and removed."""
    removed = apply_forgets(conn, forgets)
    return add_messages(conn, entries, after, through), removed


def apply_forgets(conn: sqlite3.Connection, forgets: Sequence[Forget]) -> list[int]:
    """Remove what the forget log's rows name, move its cursor; returns the entries removed.

    Idempotent: a row applied twice (two processes, or a replay) finds nothing more to remove.
    """
    if not forgets:
        return []
    conn.execute(  # a write first: the write lock before anything is read
        "INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE"
        " SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
        (FORGETS_CURSOR, str(forgets[-1].id)),
    )
    removed: dict[int, None] = {}  # ordered, each id once
    for forget in forgets:
        if forget.text is not None:
            removed.update(dict.fromkeys(forget_text(conn, forget.text)))
        elif forget.session_id is not None:
            removed.update(dict.fromkeys(_forget_messages(conn, forget)))
    delete_entries(conn, list(removed))
    return list(removed)


def _forget_messages(conn: sqlite3.Connection, forget: Forget) -> list[int]:
    """The entries of the session's messages `first`..`last`; what was recalled into the
    session after `since` and every recalled line citing those messages go from `recalls`."""
    session = forget.session_id
    conn.execute("DELETE FROM recalls WHERE session_id = ? AND ts > ?", (session, forget.since))
    cited = conn.execute(
        "SELECT id, hits FROM recalls r WHERE EXISTS (SELECT 1 FROM json_each(r.hits)"
        " WHERE json_extract(value, '$.session_id') = ?)",
        (session,),
    ).fetchall()
    for recall_id, hits in cited:
        kept = [
            hit
            for hit in json.loads(hits)
            if not (
                hit.get("session_id") == session
                and forget.first <= _message_id(hit.get("locator", "")) <= forget.last
            )
        ]
        _keep_hits(conn, recall_id, kept)
    return [
        entry_id
        for entry_id, locator in conn.execute(
            "SELECT id, locator FROM entries WHERE source = ? AND kind = 'conversation'",
            (session,),
        )
        if forget.first <= _message_id(locator) <= forget.last
    ]


def _message_id(locator: str) -> int:
    """The message id of a conversation entry's locator (`m12`, or `m12.3` for a piece)."""
    try:
        return int(locator[1:].split(".", 1)[0])
    except ValueError:
        return -1


def _keep_hits(conn: sqlite3.Connection, recall_id: int, hits: list[dict[str, Any]]) -> None:
    """A recall keeps only `hits`, and goes when none is left."""
    if hits:
        conn.execute(
            "UPDATE recalls SET hits = ? WHERE id = ?",
            (json.dumps(hits, ensure_ascii=False), recall_id),
        )
    else:
        conn.execute("DELETE FROM recalls WHERE id = ?", (recall_id,))


def add_messages(
    conn: sqlite3.Connection, entries: Sequence[Entry], after: int, through: int
) -> list[int] | None:
    """Index the entries of the records after `after` through `through`, except those holding
    forgotten text, and move the cursor; returns the ids added.

    None (nothing written) when the cursor is no longer at `after`: another process (the CLI
    beside the daemon) indexed those records meanwhile, and the caller reads the cursor again.
    The UPDATE comes first, so the check, the forgotten list and the insert hold the write lock
    together (one transaction per batch: the follower runs after every stored message).
    """
    if after == through:  # nothing new: only the forget log had rows
        return []
    moved = conn.execute(
        "UPDATE state SET value = ? WHERE key = ? AND value = ?",
        (str(through), MESSAGES_CURSOR, str(after)),
    ).rowcount
    if not moved:
        if after != 0 or get_state(conn, MESSAGES_CURSOR) is not None:
            return None
        set_state(conn, MESSAGES_CURSOR, str(through))
    needles = forgotten(conn)
    return insert_entries(conn, [e for e in entries if not _holds_any(e.text, needles)])


def _holds_any(text: str, needles: Sequence[str]) -> bool:
    lowered = text.casefold()
    return any(needle in lowered for needle in needles)


def merge_segments(conn: sqlite3.Connection) -> None:
    """Merge the full-text index into one segment (after a large catch-up: see
    `index.MERGE_AFTER_BATCHES`), on the index's thread."""
    conn.execute("INSERT INTO entries_fts (entries_fts) VALUES ('optimize')")


def forget_text(conn: sqlite3.Connection, text: str) -> list[int]:
    """Remember `text` as forgotten; the conversation entries holding it (not yet deleted), and
    what auto-recall showed of them or was asked with it, go from `recalls`."""
    needle = text.casefold()
    conn.execute("INSERT OR REPLACE INTO forgotten (text, ts) VALUES (?, ?)", (needle, time.time()))
    found = conn.execute(
        "SELECT id, query, hits FROM recalls WHERE instr(lower(query), ?) OR instr(lower(hits), ?)",
        (needle, needle),
    ).fetchall()
    for recall_id, query, hits in found:
        if needle in query.casefold():
            conn.execute("DELETE FROM recalls WHERE id = ?", (recall_id,))
            continue
        kept = [hit for hit in json.loads(hits) if needle not in hit.get("text", "").casefold()]
        _keep_hits(conn, recall_id, kept)
    return [
        entry_id
        for entry_id, body in conn.execute(
            "SELECT id, text FROM entries WHERE kind = 'conversation' AND instr(lower(text), ?)",
            (needle,),
        )
        if needle in body.casefold()
    ]


def forgotten(conn: sqlite3.Connection) -> list[str]:
    return [row[0] for row in conn.execute("SELECT text FROM forgotten")]


def clear(conn: sqlite3.Connection) -> None:
    """Forget everything indexed (the recalls shown on the Memory page and the forgotten stay)."""
    conn.execute("DELETE FROM state")
    conn.execute("DELETE FROM vectors")
    conn.execute("DELETE FROM entries")
    conn.execute("DELETE FROM entries_fts")


def search_text(
    conn: sqlite3.Connection, terms: Sequence[str], filters: Filters, limit: int
) -> list[tuple[int, float]]:
    """(entry id, BM25 score; lower is better) of the best full-text matches of any of `terms`.

    BM25 scores every entry the query matches, so a term most entries hold would make a search
    cost in proportion to the index (a common word grows with months of chat). Such a term (in
    more than `COMMON_ENTRIES`) is left out when a rarer one is there: the rare word is what
    finds the entry, and a hit's weight in the fusion still counts every word it holds
    (`search._text_side`). When every term is that common, only their newest
    `COMMON_ENTRIES` matches are ranked. A long message (pasted text) is searched by its
    `QUERY_TERMS` rarest terms: BM25's work is its matches times its terms.
    """
    held = sorted(
        ((count, term) for term in terms if (count := _holding(conn, term))),
        key=lambda found: found[0],
    )  # rarest first; a term no entry holds finds nothing
    if not held:
        return []
    rare = [term for count, term in held if count <= COMMON_ENTRIES][:QUERY_TERMS]
    match = filters.match(" OR ".join(rare or [term for _, term in held[:QUERY_TERMS]]))
    floor = 0 if rare else _newest_floor(conn, match)
    where, params = filters.sql()
    return conn.execute(
        "SELECT f.rowid, f.rank FROM entries_fts f JOIN entries e ON e.id = f.rowid"
        f" WHERE entries_fts MATCH ? AND f.rowid >= ? AND {where} ORDER BY f.rank LIMIT ?",
        (match, floor, *params, limit),
    ).fetchall()


def _holding(conn: sqlite3.Connection, term: str) -> int:
    """How many entries hold `term`, counted no further than one past `COMMON_ENTRIES` (a walk
    of its list of entries that stops there, unranked)."""
    return int(
        conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM entries_fts WHERE entries_fts MATCH ? LIMIT ?)",
            (f"body : {term}", COMMON_ENTRIES + 1),
        ).fetchone()[0]
    )


def _newest_floor(conn: sqlite3.Connection, match: str) -> int:
    """The lowest entry id among the newest `COMMON_ENTRIES` matches of `match` (0 if fewer)."""
    found = conn.execute(
        "SELECT rowid FROM entries_fts WHERE entries_fts MATCH ? ORDER BY rowid DESC"
        " LIMIT 1 OFFSET ?",
        (match, COMMON_ENTRIES - 1),
    ).fetchone()
    return int(found[0]) if found else 0


def text_hits_with_rows(
    conn: sqlite3.Connection, terms: Sequence[str], filters: Filters, limit: int
) -> tuple[list[tuple[int, float]], dict[int, Row]]:
    """`search_text` and the rows of its hits, in one call (a search's one hand-off)."""
    hits = search_text(conn, terms, filters, limit)
    return hits, rows(conn, [entry_id for entry_id, _ in hits])


def rows(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Row]:
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    found = conn.execute(f"SELECT {_ROW} FROM entries WHERE id IN ({marks})", tuple(ids))
    return {r[0]: Row(*r) for r in found}


def count_entries(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM entries").fetchone()[0])


def pending_vectors(
    conn: sqlite3.Connection, model: str, after: int, limit: int
) -> list[tuple[int, str, float, str | None, str]]:
    """(id, kind, ts, session id, text) of entries after id `after` without a vector of `model`,
    oldest first (the vector worker's query: ids only grow, so it keeps `after` as its cursor)."""
    return conn.execute(
        "SELECT e.id, e.kind, e.ts, e.session_id, e.text FROM entries e"
        " LEFT JOIN vectors v ON v.entry_id = e.id AND v.model = ?"
        " WHERE v.entry_id IS NULL AND e.id > ? ORDER BY e.id LIMIT ?",
        (model, after, limit),
    ).fetchall()


def store_vectors(
    conn: sqlite3.Connection, model: str, vectors: Sequence[tuple[int, bytes]]
) -> set[int]:
    """Store the vectors of entries that still exist (one deleted meanwhile is skipped); returns
    their ids. Its transaction must take the write lock first (the worker's BEGIN IMMEDIATE)."""
    marks = ", ".join("?" * len(vectors))
    found = conn.execute(
        f"SELECT id FROM entries WHERE id IN ({marks})", [entry_id for entry_id, _ in vectors]
    )
    alive = {row[0] for row in found}
    conn.executemany(
        "INSERT OR REPLACE INTO vectors (entry_id, model, vector) VALUES (?, ?, ?)",
        ((entry_id, model, blob) for entry_id, blob in vectors if entry_id in alive),
    )
    return alive


def drop_other_vectors(conn: sqlite3.Connection, model: str) -> int:
    """Delete vectors of models other than `model` (after a switch); returns how many."""
    return conn.execute("DELETE FROM vectors WHERE model != ?", (model,)).rowcount


def count_vectors(conn: sqlite3.Connection, model: str) -> int:
    return int(conn.execute("SELECT count(*) FROM vectors WHERE model = ?", (model,)).fetchone()[0])


def load_vectors(
    conn: sqlite3.Connection, model: str
) -> Iterator[tuple[int, str, float, str | None, bytes]]:
    """(id, kind, ts, session id, vector) of every entry with a vector of `model`, as read (in
    no particular order: sorting 100,000 rows with their vectors took half a second)."""
    return conn.execute(
        "SELECT e.id, e.kind, e.ts, e.session_id, v.vector FROM vectors v"
        " JOIN entries e ON e.id = v.entry_id WHERE v.model = ?",
        (model,),
    )


def add_recall(
    conn: sqlite3.Connection, session_id: str, ts: float, query: str, hits: list[dict[str, Any]]
) -> None:
    conn.execute(
        "INSERT INTO recalls (session_id, ts, query, hits) VALUES (?, ?, ?, ?)",
        (session_id, ts, query, json.dumps(hits, ensure_ascii=False)),
    )


def recalls(conn: sqlite3.Connection, session_id: str | None, limit: int) -> list[dict[str, Any]]:
    """The newest recalls (of one session, or all), newest first."""
    where, params = ("WHERE session_id = ?", [session_id]) if session_id else ("", [])
    found = conn.execute(
        f"SELECT id, session_id, ts, query, hits FROM recalls {where} ORDER BY id DESC LIMIT ?",
        (*params, limit),
    )
    return [
        {"id": i, "session_id": s, "ts": ts, "query": q, "hits": json.loads(h)}
        for i, s, ts, q, h in found
    ]
