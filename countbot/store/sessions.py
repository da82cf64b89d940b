"""Sessions and their append-only message log.

Records are plain dicts with a `type` (the agent's history records); the store keeps them as
JSON and never interprets them beyond the text it needs for titles and search. Reads on the hot
path (`append`, `load_window`) touch only the rows they return, however long the log grows.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import msgspec

from countbot.common.charge import Charge
from countbot.llm.unicode_repair import json_text
from countbot.store import forget_log
from countbot.store.database import Database
from countbot.store.forget_log import Forget
from countbot.store.usage import UsageLog
from countbot.store.window_cache import WindowCache

TITLE_LENGTH = 60

# Told (session id, "created" | "updated" | "renamed" | "deleted" | "memory") after a change that
# shows in a session list: the daemon pushes these to open browser tabs. "updated" is a new
# message (or a rewind): the session's channel, agent and memory switch stay; "memory" is its
# switch turned.
ChangeListener = Callable[[str, str], None]
# Told the session and the new message's id after every committed record (the memory index
# catches up from it).
AppendListener = Callable[[str, int], None]
# Told after a commit that wrote to the forget log (a rewind, a deletion, a forgotten text).
ForgetListener = Callable[[], None]
# Another store's write, run in the transaction that appends a record (an answer's usage row).
Write = Callable[[sqlite3.Connection], object]

_COLUMNS = (
    "id, title, channel, chat_id, created_at, updated_at,"
    " message_count, summarized_through, summary, model, memory_off, agent"
)
# The agent a session belongs to when none is named (`agents:` in config.yaml).
MAIN_AGENT = "main"


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    title: str
    channel: str | None
    chat_id: str | None
    created_at: float
    updated_at: float
    message_count: int
    # Records with an id up to this one are covered by `summary` and left out of the window.
    summarized_through: int
    summary: str | None
    # The model this chat picked (web UI); None: the configured one.
    model: str | None = None
    # Kept out of memory (the web UI's switch): neither indexed nor recalled into.
    memory_off: bool = False
    # The agent whose conversation it is; only that agent's turns, recall and lists see it.
    agent: str = MAIN_AGENT


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One committed record with the session facts a citation needs."""

    id: int
    session_id: str
    channel: str | None
    title: str
    record: dict[str, Any]
    # The session is kept out of memory (`SessionInfo.memory_off`).
    memory_off: bool = False
    # For an assistant record: the stored author of the user message it answers (None: none).
    answering: dict[str, Any] | None = None
    # For an assistant record stored before answers said what their turn read (no `read`
    # field): whether tool results came between the message it answers and it.
    after_tools: bool = False
    agent: str = MAIN_AGENT


@dataclass(slots=True)  # not frozen: the agent's HistoryWindow protocol declares plain attributes
class Window:
    """The recent, not-yet-summarized records (oldest first, each with its `id`) and the summary."""

    records: list[dict[str, Any]]
    summary: str | None = None


class SessionStore:
    """Sessions, their messages and running summaries; serves as the agent's SessionHistory."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._listeners: builtins.list[ChangeListener] = []
        self._append_listeners: builtins.list[AppendListener] = []
        self._forget_listeners: builtins.list[ForgetListener] = []
        self._windows = WindowCache()
        # Changes to any log so far: a window read while one completed is not cached.
        self._writes = 0

    def on_change(self, listener: ChangeListener) -> None:
        """Call `listener` after each change a session list shows (new, active, renamed, gone)."""
        self._listeners.append(listener)

    def on_append(self, listener: AppendListener) -> None:
        """Call `listener` with the session and message id after each committed record."""
        self._append_listeners.append(listener)

    def on_forget(self, listener: ForgetListener) -> None:
        """Call `listener` after each commit that wrote to the forget log (`forget_log.py`)."""
        self._forget_listeners.append(listener)

    @property
    def outside_writes(self) -> int:
        """How often another process was seen writing to the file (`Database.outside_writes`)."""
        return self._db.outside_writes

    def _changed(self, session_id: str, change: str) -> None:
        for listener in self._listeners:
            listener(session_id, change)

    async def create(
        self,
        session_id: str | None = None,
        *,
        title: str = "",
        channel: str | None = None,
        chat_id: str | None = None,
        agent: str = MAIN_AGENT,
    ) -> SessionInfo:
        """A new, empty session of `agent`; ValueError if `session_id` is taken."""
        session_id = session_id or uuid.uuid4().hex[:12]
        where = _Where(channel, chat_id, agent)
        try:
            info = await self._db.run(_insert_session, session_id, title, where, time.time(), False)
        except sqlite3.IntegrityError as exc:
            raise ValueError(f"session {session_id!r} already exists") from exc
        self._changed(session_id, "created")
        return info

    async def ensure(
        self,
        session_id: str,
        *,
        channel: str | None = None,
        chat_id: str | None = None,
        agent: str = MAIN_AGENT,
    ) -> SessionInfo:
        """The session, created first (as `agent`'s) if it does not exist yet; an existing one
        keeps its agent (the caller compares)."""
        where = _Where(channel, chat_id, agent)
        info = await self._db.run(_insert_session, session_id, "", where, time.time(), True)
        self._changed(session_id, "created" if info.message_count == 0 else "updated")
        return info

    async def get(self, session_id: str) -> SessionInfo | None:
        return await self._db.run(_get_session, session_id)

    async def set_model(self, session_id: str, model: str | None) -> None:
        """Remember the model this chat picked, so its later turns (and reloads) use it."""
        await self._db.run(_set_model, session_id, model)

    async def list(
        self,
        *,
        limit: int = 50,
        offset: int = 0,
        query: str | None = None,
        agent: str | None = None,
    ) -> builtins.list[SessionInfo]:
        """Most recently active first; `query` matches the title or any user/assistant text;
        `agent` keeps that agent's sessions only (None: every agent's)."""
        page = _Page(max(limit, 0), max(offset, 0), query or None, agent)
        return await self._db.run(_list_sessions, page)

    async def rename(self, session_id: str, title: str) -> bool:
        renamed = await self._db.run(_rename, session_id, title)
        if renamed:
            self._changed(session_id, "renamed")
        return renamed

    async def delete(self, session_id: str) -> bool:
        """Remove the session and its messages; False if there was no such session."""
        deleted = await self._db.run(_delete, session_id)
        self._rewritten(session_id)
        if deleted:
            self._changed(session_id, "deleted")
            self._forgot()
        return deleted

    async def append(
        self, session_id: str, record: dict[str, Any], *, charge: Charge | None = None
    ) -> int:
        """Commit one record (creating the session if needed) and return its message id: the
        agent's `EntryLog`.

        `charge`: an answer's usage, its row committed in the same transaction, first (one
        commit where two cost a warm turn time on the database thread, and no moment where
        one is stored without the other).
        """
        kind = record.get("type")
        if not isinstance(kind, str) or not kind:
            raise ValueError("a history record needs a non-empty string 'type'")
        also = None if charge is None else UsageLog.charged(charge)
        message_id, stored, size = await self._db.run(
            _append, session_id, kind, record, time.time(), also
        )
        self._writes += 1
        self._windows.appended(session_id, stored, size)
        if kind == "user":  # a new message moves the session up and may give it its title
            self._changed(session_id, "updated")
        for listener in self._append_listeners:
            listener(session_id, message_id)
        return message_id

    async def messages_after(
        self, after_id: int, limit: int, types: tuple[str, ...] = ("user", "assistant")
    ) -> tuple[builtins.list[StoredMessage], int]:
        """Up to `limit` records of `types` after `after_id`, oldest first, in all sessions.

        Also returns the id through which the log was read, so a reader skips the records of
        other types next time.
        """
        return await self._db.run(_messages_after, after_id, max(limit, 1), types)

    async def messages(
        self, session_id: str, *, before_id: int | None = None, limit: int = 50
    ) -> builtins.list[dict[str, Any]]:
        """One page of records, oldest first; pass the first record's id as `before_id` for more."""
        return await self._db.run(_page, session_id, before_id, max(limit, 0))

    def cached_window(self, session_id: str, limit: int) -> Window | None:
        """What `load_window` returns, when the session's window is in memory (no I/O, no
        waiting); None when it must be read."""
        cached = self._windows.get(session_id, max(limit, 0), self._db.outside_writes)
        return Window(*cached) if cached is not None else None

    async def load_window(self, session_id: str, limit: int) -> Window:
        """The newest `limit` unsummarized records, oldest first, and the running summary.

        Served from memory while the session's recent records are cached (`window_cache.py`);
        the records are shared with the cache: read them, never change them.
        """
        cached = self.cached_window(session_id, limit)
        if cached is not None:
            return cached
        limit, generation, writes = max(limit, 0), self._db.outside_writes, self._writes
        window, sizes = await self._db.run(_load_window, session_id, limit)
        if writes == self._writes and generation == self._db.outside_writes:
            self._windows.fill(session_id, window.records, sizes, window.summary, limit, generation)
        return window

    async def load_unsummarized(self, session_id: str, limit: int) -> builtins.list[dict[str, Any]]:
        """The oldest `limit` unsummarized records, oldest first: what to summarize next."""
        return await self._db.run(_load_unsummarized, session_id, max(limit, 0))

    async def tool_result(self, session_id: str, tool_call_id: str) -> str | None:
        """The stored content of one tool call's result in the session (None if none)."""
        return await self._db.run(_tool_result, session_id, tool_call_id)

    async def rewind(self, session_id: str, from_id: int) -> str:
        """Drop user record `from_id` and everything after it (a regenerate or an edit replaces
        the tail). Returns "" when done, else why not; what the summary covers stays."""
        refusal = await self._db.run(_rewind, session_id, from_id)
        self._rewritten(session_id)
        if not refusal:
            self._changed(session_id, "updated")
            self._forgot()
        return refusal

    async def set_memory_off(self, session_id: str, off: bool) -> bool:
        """Keep the session out of memory (or let it in again from now on); False if there is
        no such session. Keeping it out forgets what it holds, in the same commit."""
        found = await self._db.run(_set_memory_off, session_id, off)
        if found:
            self._changed(session_id, "memory")
            if off:
                self._forgot()
        return found

    async def forget_text(self, text: str) -> None:
        """Log that conversation passages holding `text` are forgotten (`memory_forget`)."""
        await self._db.run(forget_log.record_text, text)
        self._forgot()

    async def forgets_after(self, after_id: int, limit: int) -> builtins.list[Forget]:
        """The forget log's rows after `after_id`, oldest first (what the memory index applies)."""
        return await self._db.run(forget_log.forgets_after, after_id, max(limit, 1))

    def _forgot(self) -> None:
        for listener in self._forget_listeners:
            listener()

    async def mark_summarized(self, session_id: str, through_id: int, summary: str) -> None:
        """Records up to `through_id` are now covered by `summary`.

        A mark behind the current one is ignored, so a late summarizer cannot bring back records.
        """
        await self._db.run(_mark_summarized, session_id, through_id, summary)
        self._rewritten(session_id)

    def _rewritten(self, session_id: str) -> None:
        """The session's log or summary changed other than by an append: read it again."""
        self._writes += 1
        self._windows.drop(session_id)


# --- SQL, run on the database thread ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Where:
    """Where a new session's messages come from, and whose it is."""

    channel: str | None
    chat_id: str | None
    agent: str


@dataclass(frozen=True, slots=True)
class _Page:
    """One page of the session list."""

    limit: int
    offset: int
    query: str | None
    agent: str | None


def _insert_session(
    conn: sqlite3.Connection,
    session_id: str,
    title: str,
    where: _Where,
    now: float,
    if_missing: bool,
) -> SessionInfo:
    verb = "INSERT OR IGNORE" if if_missing else "INSERT"
    conn.execute(
        f"{verb} INTO sessions (id, title, channel, chat_id, created_at, updated_at, agent)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (session_id, title, where.channel, where.chat_id, now, now, where.agent),
    )
    row = conn.execute(f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return SessionInfo(*row)


def _get_session(conn: sqlite3.Connection, session_id: str) -> SessionInfo | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return SessionInfo(*row) if row else None


def _set_model(conn: sqlite3.Connection, session_id: str, model: str | None) -> None:
    conn.execute("UPDATE sessions SET model = ? WHERE id = ?", (model, session_id))


def _set_memory_off(conn: sqlite3.Connection, session_id: str, off: bool) -> bool:
    changed = conn.execute(
        "UPDATE sessions SET memory_off = ? WHERE id = ?", (int(off), session_id)
    ).rowcount
    if changed and off:
        forget_log.record_session(conn, session_id, 0)
    return changed > 0


def _list_sessions(conn: sqlite3.Connection, page: _Page) -> list[SessionInfo]:
    limit, offset, query = page.limit, page.offset, page.query
    # `agent IS NULL` selects every agent's (the column itself is never NULL).
    mine = "(:agent IS NULL OR s.agent = :agent)"
    if query is None:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM sessions AS s WHERE {mine}"
            " ORDER BY updated_at DESC, rowid DESC LIMIT :limit OFFSET :offset",
            {"agent": page.agent, "limit": limit, "offset": offset},
        )
    else:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM sessions AS s WHERE {mine} AND ("
            " s.title LIKE :pattern ESCAPE '\\' OR EXISTS ("
            "   SELECT 1 FROM messages AS m"
            "   WHERE m.session_id = s.id AND m.type IN ('user', 'assistant')"
            "   AND json_extract(m.record,"
            "       CASE m.type WHEN 'user' THEN '$.content' ELSE '$.text' END)"
            "       LIKE :pattern ESCAPE '\\'))"
            " ORDER BY s.updated_at DESC, s.rowid DESC LIMIT :limit OFFSET :offset",
            {
                "pattern": f"%{_escape_like(query)}%",
                "agent": page.agent,
                "limit": limit,
                "offset": offset,
            },
        )
    return [SessionInfo(*row) for row in rows]


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _rename(conn: sqlite3.Connection, session_id: str, title: str) -> bool:
    cursor = conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))
    return cursor.rowcount > 0


def _delete(conn: sqlite3.Connection, session_id: str) -> bool:
    # The messages go with it through ON DELETE CASCADE; memory forgets them in the same commit.
    forget_log.record_session(conn, session_id, 0)
    return conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0


def _append(
    conn: sqlite3.Connection,
    session_id: str,
    kind: str,
    record: dict[str, Any],
    now: float,
    also: Write | None = None,
) -> tuple[int, dict[str, Any], int]:
    """The new message's id, its record as stored (decoded, with the id) and its stored size."""
    if also is not None:
        also(conn)
    title = _title_of(record)
    touched = conn.execute(
        "UPDATE sessions SET updated_at = ?, message_count = message_count + 1,"
        " title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?",
        (now, title, session_id),
    ).rowcount
    if not touched:
        conn.execute(
            "INSERT INTO sessions (id, title, created_at, updated_at, message_count)"
            " VALUES (?, ?, ?, ?, 1)",
            (session_id, title, now, now),
        )
    if "id" in record:  # a record read back from the store carries its old id; the row has its own
        record = {key: value for key, value in record.items() if key != "id"}
    # msgspec writes it (and reads it back) in about a third of `json`'s time on the database
    # thread, whose caches a turn leaves cold.
    data = json_text(record)
    (message_id,) = conn.execute(
        "INSERT INTO messages (session_id, type, record) VALUES (?, ?, ?) RETURNING id",
        (session_id, kind, data),
    ).fetchone()
    stored = msgspec.json.decode(data)
    stored["id"] = message_id
    return message_id, stored, len(data)


def _rewind(conn: sqlite3.Connection, session_id: str, from_id: int) -> str:
    row = conn.execute(
        "SELECT m.type, s.summarized_through FROM messages AS m JOIN sessions AS s"
        " ON s.id = m.session_id WHERE m.id = ? AND m.session_id = ?",
        (from_id, session_id),
    ).fetchone()
    if row is None or row[0] != "user":
        return "it names no message the user sent in this session"
    if from_id <= row[1]:
        return "that message is already summarized into memory"
    # What auto-recall put into the turns dropped came after the record before them.
    before = conn.execute(
        "SELECT json_extract(record, '$.ts') FROM messages WHERE session_id = ? AND id < ?"
        " ORDER BY id DESC LIMIT 1",
        (session_id, from_id),
    ).fetchone()
    forget_log.record_session(conn, session_id, from_id, float(before[0] or 0) if before else 0.0)
    deleted = conn.execute(
        "DELETE FROM messages WHERE session_id = ? AND id >= ?", (session_id, from_id)
    ).rowcount
    conn.execute(
        "UPDATE sessions SET message_count = message_count - ? WHERE id = ?", (deleted, session_id)
    )
    return ""


def _title_of(record: dict[str, Any]) -> str:
    """A title from a user message's own words (typed, else spoken; never what came with them,
    a document's text): one line, at most TITLE_LENGTH characters."""
    if record.get("type") != "user":
        return ""
    spoken = [p.get("text") for p in record.get("parts") or () if p.get("kind") == "voice"]
    content = record.get("content") or next((text for text in spoken if text), "")
    return " ".join(content.split())[:TITLE_LENGTH] if isinstance(content, str) else ""


def _page(
    conn: sqlite3.Connection, session_id: str, before_id: int | None, limit: int
) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT id, record FROM messages WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
        (session_id, before_id if before_id is not None else 1 << 62, limit),
    ).fetchall()
    return _decode(reversed(rows))


def _load_window(conn: sqlite3.Connection, session_id: str, limit: int) -> tuple[Window, list[int]]:
    """The window and each of its records' stored size."""
    row = conn.execute(
        "SELECT summarized_through, summary FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None:
        return Window([]), []
    through, summary = row
    rows = conn.execute(
        "SELECT id, record FROM messages WHERE session_id = ? AND id > ? ORDER BY id DESC LIMIT ?",
        (session_id, through, limit),
    ).fetchall()
    rows.reverse()
    return Window(_decode(rows), summary), [len(data) for _, data in rows]


def _load_unsummarized(
    conn: sqlite3.Connection, session_id: str, limit: int
) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT id, record FROM messages WHERE session_id = ? AND id > coalesce("
        "  (SELECT summarized_through FROM sessions WHERE id = ?), 0)"
        " ORDER BY id LIMIT ?",
        (session_id, session_id, limit),
    )
    return _decode(rows)


def _tool_result(conn: sqlite3.Connection, session_id: str, tool_call_id: str) -> str | None:
    row = conn.execute(
        "SELECT json_extract(record, '$.content') FROM messages WHERE session_id = ?"
        " AND type = 'tool_result' AND json_extract(record, '$.tool_call_id') = ?"
        " ORDER BY id DESC LIMIT 1",
        (session_id, tool_call_id),
    ).fetchone()
    return row[0] if row else None


def _mark_summarized(
    conn: sqlite3.Connection, session_id: str, through_id: int, summary: str
) -> None:
    conn.execute(
        "UPDATE sessions SET summarized_through = ?, summary = ?"
        " WHERE id = ? AND summarized_through <= ?",
        (through_id, summary, session_id, through_id),
    )


def _messages_after(
    conn: sqlite3.Connection, after_id: int, limit: int, types: tuple[str, ...]
) -> tuple[list[StoredMessage], int]:
    (last,) = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()
    marks = ", ".join("?" * len(types))
    rows = conn.execute(
        "SELECT m.id, m.session_id, s.channel, s.title, m.record, s.memory_off, s.agent, CASE WHEN"
        " m.type = 'assistant' THEN (SELECT json_extract(u.record, '$.author') FROM messages u"
        " WHERE u.session_id = m.session_id AND u.type = 'user' AND u.id < m.id"
        " ORDER BY u.id DESC LIMIT 1) END,"
        " m.type = 'assistant' AND json_type(m.record, '$.read') IS NULL AND EXISTS (SELECT 1"
        " FROM messages t WHERE t.session_id = m.session_id AND t.type = 'tool_result'"
        " AND t.id < m.id AND t.id > coalesce((SELECT max(u.id) FROM messages u"
        " WHERE u.session_id = m.session_id AND u.type = 'user' AND u.id < m.id), 0))"
        f" FROM messages m JOIN sessions s ON s.id = m.session_id"
        f" WHERE m.id > ? AND m.type IN ({marks}) ORDER BY m.id LIMIT ?",
        (after_id, *types, limit),
    ).fetchall()
    found = [
        StoredMessage(
            i,
            sid,
            ch,
            title,
            json.loads(data),
            bool(off),
            json.loads(answering or "null"),
            bool(tools),
            agent,
        )
        for i, sid, ch, title, data, off, agent, answering, tools in rows
    ]
    through = found[-1].id if len(found) == limit else max(int(last), after_id)
    return found, through


def _decode(rows: Iterable[tuple[int, str]]) -> list[dict[str, Any]]:
    records = []
    for message_id, data in rows:
        record = json.loads(data)
        record["id"] = message_id
        records.append(record)
    return records
