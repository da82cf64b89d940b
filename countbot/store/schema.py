"""The database schema as an ordered list of migrations.

`PRAGMA user_version` records how many have been applied. Never edit a shipped script: append a
new one, so every user's file reaches the same schema by the same steps.
"""

from __future__ import annotations

MIGRATIONS: list[str] = [
    # 1: sessions, their append-only message log, tool-call history, usage per day.
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL DEFAULT '',
        channel TEXT,
        chat_id TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        -- Kept here so the hot path never counts the log.
        message_count INTEGER NOT NULL DEFAULT 0,
        summarized_through INTEGER NOT NULL DEFAULT 0,
        summary TEXT
    );
    CREATE INDEX sessions_by_updated ON sessions (updated_at);

    -- AUTOINCREMENT: an id is never reused after a delete, so a stale id can't name a new row.
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        type TEXT NOT NULL,
        record TEXT NOT NULL
    );
    CREATE INDEX messages_by_session ON messages (session_id, id);

    CREATE TABLE tool_calls (
        id INTEGER PRIMARY KEY,
        ts REAL NOT NULL,
        session_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        name TEXT NOT NULL,
        arguments TEXT NOT NULL,
        user_message TEXT NOT NULL,
        result TEXT NOT NULL,
        status TEXT NOT NULL,
        duration_ms REAL NOT NULL,
        channel TEXT
    );
    CREATE INDEX tool_calls_by_ts ON tool_calls (ts);
    CREATE INDEX tool_calls_by_session ON tool_calls (session_id, ts);
    CREATE INDEX tool_calls_by_name ON tool_calls (name, ts);

    CREATE TABLE usage (
        day TEXT NOT NULL,
        session_id TEXT NOT NULL,
        model TEXT NOT NULL,
        requests INTEGER NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        cost_usd REAL NOT NULL,
        last_ts REAL NOT NULL,
        PRIMARY KEY (day, session_id, model)
    ) WITHOUT ROWID;
    CREATE INDEX usage_by_session ON usage (session_id);
    """,
]
