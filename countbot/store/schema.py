"""The database schema as an ordered list of migrations.

`PRAGMA user_version` records how many have been applied. Never edit a shipped script: append a
new one, so every user's file reaches the same schema by the same steps. A step SQL alone cannot
take (reading JSON records with Python) is a function of the connection, run in the same
transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from countbot.store.authors_from_marks import derive_authors

Migration = str | Callable[[sqlite3.Connection], None]

MIGRATIONS: list[Migration] = [
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
    # 2: chat channels: pairing codes and the senders they paired, each chat's current session,
    # and how far each channel's update stream has been handled.
    """
    CREATE TABLE pairing_codes (
        channel TEXT NOT NULL,
        sender_id TEXT NOT NULL,
        username TEXT,
        display_name TEXT NOT NULL DEFAULT '',
        code TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (channel, sender_id)
    ) WITHOUT ROWID;
    CREATE UNIQUE INDEX pairing_codes_by_code ON pairing_codes (channel, code);

    CREATE TABLE paired_senders (
        channel TEXT NOT NULL,
        sender_id TEXT NOT NULL,
        username TEXT,
        display_name TEXT NOT NULL DEFAULT '',
        approved_at REAL NOT NULL,
        PRIMARY KEY (channel, sender_id)
    ) WITHOUT ROWID;

    CREATE TABLE channel_chats (
        channel TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        PRIMARY KEY (channel, chat_id)
    ) WITHOUT ROWID;

    CREATE TABLE channel_cursors (
        channel TEXT PRIMARY KEY,
        position INTEGER NOT NULL
    );
    """,
    # 3: scheduled jobs (definitions in readable columns) and their run history.
    """
    CREATE TABLE cron_jobs (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        schedule_kind TEXT NOT NULL CHECK (schedule_kind IN ('cron', 'every', 'at')),
        -- A crontab expression, an interval in seconds, or an ISO date-time.
        schedule_value TEXT NOT NULL,
        timezone TEXT NOT NULL,
        -- When the schedule was set: intervals count from here.
        schedule_since REAL NOT NULL,
        prompt TEXT NOT NULL,
        session_id TEXT NOT NULL,
        -- A channel name, 'web' (the job's session in the web UI), or NULL for nowhere.
        deliver_channel TEXT,
        deliver_chat_id TEXT,
        enabled INTEGER NOT NULL DEFAULT 1,
        created_from TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        -- Fire times up to here have been handled (run, or recorded as missed).
        checked_through REAL NOT NULL,
        consecutive_failures INTEGER NOT NULL DEFAULT 0
    );

    CREATE TABLE cron_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id TEXT NOT NULL REFERENCES cron_jobs (id) ON DELETE CASCADE,
        trigger TEXT NOT NULL,
        scheduled_for REAL,
        started_at REAL NOT NULL,
        ended_at REAL,
        status TEXT NOT NULL,
        error TEXT NOT NULL DEFAULT '',
        output TEXT NOT NULL DEFAULT '',
        delivered INTEGER NOT NULL DEFAULT 0,
        delivery_detail TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX cron_runs_by_job ON cron_runs (job_id, id);
    """,
    # 4: approvals: what the user said "Always allow" to (per tool and exact key, revocable), and
    # a note on a job's run (e.g. a command denied because nobody was there to approve it).
    """
    CREATE TABLE approval_rules (
        tool TEXT NOT NULL,
        key TEXT NOT NULL,
        summary TEXT NOT NULL DEFAULT '',
        -- Who said "Always allow", and where (web, telegram:<user id>, cli).
        allowed_by TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        PRIMARY KEY (tool, key)
    ) WITHOUT ROWID;

    ALTER TABLE cron_runs ADD COLUMN notes TEXT NOT NULL DEFAULT '';
    """,
    # 5: background subagents: what each was asked, where its report goes, how it ended.
    """
    CREATE TABLE subagents (
        id TEXT PRIMARY KEY,
        parent_session TEXT NOT NULL,
        session_id TEXT NOT NULL,
        label TEXT NOT NULL DEFAULT '',
        task TEXT NOT NULL,
        -- JSON list of tool names, or NULL for every tool a subagent may have.
        tools TEXT,
        depth INTEGER NOT NULL,
        -- The parent turn's address, so the report turn runs as that chat.
        channel TEXT,
        chat_id TEXT,
        status TEXT NOT NULL CHECK (status IN
            ('queued', 'running', 'done', 'error', 'timeout', 'cancelled', 'interrupted')),
        result TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        started_at REAL,
        ended_at REAL,
        -- The report went into the parent session (a restart delivers the ones that did not).
        reported INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX subagents_by_parent ON subagents (parent_session, created_at);
    CREATE INDEX subagents_by_status ON subagents (status);
    """,
    # 6: small per-day counters that must survive a restart (heartbeat beats, budget warnings).
    """
    CREATE TABLE daily_counters (
        name TEXT NOT NULL,
        day TEXT NOT NULL,
        value INTEGER NOT NULL,
        PRIMARY KEY (name, day)
    ) WITHOUT ROWID;
    """,
    # 7: chat channels remember what they received (a platform re-sending an event after a
    # restart is not answered twice) and what they owe (answers recorded before delivery).
    """
    CREATE TABLE channel_seen (
        channel TEXT NOT NULL,
        key TEXT NOT NULL,
        seen_at REAL NOT NULL,
        PRIMARY KEY (channel, key)
    ) WITHOUT ROWID;
    CREATE INDEX channel_seen_by_age ON channel_seen (seen_at);

    CREATE TABLE channel_outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        channel TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        text TEXT NOT NULL,
        -- JSON list of workspace file paths sent after the text.
        files TEXT NOT NULL DEFAULT '[]',
        -- The daemon run that recorded it: a later run delivers what an earlier one could not.
        boot TEXT NOT NULL,
        created_at REAL NOT NULL,
        -- NULL while owed; the time it was delivered (or given up, with a detail).
        settled_at REAL,
        detail TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX channel_outbox_owed ON channel_outbox (channel, settled_at);
    """,
    # 8: the model a chat picked for itself (NULL: the configured one).
    """
    ALTER TABLE sessions ADD COLUMN model TEXT;
    """,
    # 9: what the memory index must forget (store/forget_log.py), written in the transaction of
    # the rewind, deletion or memory_forget that forgets it.
    """
    CREATE TABLE memory_forgets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        -- A session's messages first_message..last_message (and recalls into it from since on),
        session_id TEXT,
        first_message INTEGER NOT NULL DEFAULT 0,
        last_message INTEGER NOT NULL DEFAULT 0,
        since REAL NOT NULL DEFAULT 0,
        -- or the conversation passages holding this text (casefolded).
        text TEXT,
        created_at REAL NOT NULL
    );
    """,
    # 10: triggers (webhooks, watched folders and mailboxes): every accepted event, recorded before
    # it is acknowledged, and how its turn ended; what each watched folder has already seen.
    """
    CREATE TABLE trigger_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        trigger TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('hook', 'folder', 'mailbox')),
        -- The source's own id of the event (a delivery id, a file version, a mail's UID):
        -- the same key twice is one event.
        key TEXT NOT NULL,
        -- JSON: what the turn is given (the payload and the facts around it).
        payload TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('received', 'running', 'delivered', 'failed')),
        detail TEXT NOT NULL DEFAULT '',
        answer TEXT NOT NULL DEFAULT '',
        -- Turns started for it: a restart resumes an interrupted one once, not forever.
        attempts INTEGER NOT NULL DEFAULT 0,
        received_at REAL NOT NULL,
        started_at REAL,
        ended_at REAL,
        UNIQUE (trigger, key)
    );
    CREATE INDEX trigger_events_open ON trigger_events (status, trigger, id);
    CREATE INDEX trigger_events_by_age ON trigger_events (received_at);

    CREATE TABLE trigger_files (
        trigger TEXT NOT NULL,
        path TEXT NOT NULL,
        -- The version last taken in: "<mtime_ns>:<size>".
        version TEXT NOT NULL,
        PRIMARY KEY (trigger, path)
    ) WITHOUT ROWID;
    """,
    # 11: who wrote each user message, derived once from the marks its text carried.
    derive_authors,
    # 12: usage by purpose (the answers, summaries, the memory flush, titles), with the prompt
    # tokens read from and written to a provider's prompt cache and those of auto-recall's block.
    """
    CREATE TABLE usage_new (
        day TEXT NOT NULL,
        session_id TEXT NOT NULL,
        model TEXT NOT NULL,
        purpose TEXT NOT NULL DEFAULT 'answer',
        requests INTEGER NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        -- Shares of prompt_tokens: read from the prompt cache, written to it, the recall block.
        cached_tokens INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        recall_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL NOT NULL,
        last_ts REAL NOT NULL,
        PRIMARY KEY (day, session_id, model, purpose)
    ) WITHOUT ROWID;
    INSERT INTO usage_new (day, session_id, model, requests, prompt_tokens, completion_tokens,
        cost_usd, last_ts)
        SELECT day, session_id, model, requests, prompt_tokens, completion_tokens, cost_usd,
        last_ts FROM usage;
    DROP TABLE usage;
    ALTER TABLE usage_new RENAME TO usage;
    CREATE INDEX usage_by_session ON usage (session_id);
    """,
    # 13: a conversation kept out of memory (the web UI's switch): not indexed, not recalled into.
    """
    ALTER TABLE sessions ADD COLUMN memory_off INTEGER NOT NULL DEFAULT 0;
    """,
    # 14: the agent each session belongs to (`agents:` in config.yaml); every earlier one is
    # `main`'s, the only agent there was.
    """
    ALTER TABLE sessions ADD COLUMN agent TEXT NOT NULL DEFAULT 'main';
    CREATE INDEX sessions_by_agent ON sessions (agent, updated_at);
    """,
    # 15: "Always allow" rules belong to the agent they were given to (every earlier one to
    # `main`): an approval given to one agent never lets another act.
    """
    CREATE TABLE approval_rules_new (
        agent TEXT NOT NULL,
        tool TEXT NOT NULL,
        key TEXT NOT NULL,
        summary TEXT NOT NULL DEFAULT '',
        allowed_by TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        PRIMARY KEY (agent, tool, key)
    ) WITHOUT ROWID;
    INSERT INTO approval_rules_new (agent, tool, key, summary, allowed_by, created_at)
        SELECT 'main', tool, key, summary, allowed_by, created_at FROM approval_rules;
    DROP TABLE approval_rules;
    ALTER TABLE approval_rules_new RENAME TO approval_rules;
    """,
    # 16: the agent each cron job belongs to (every earlier one is `main`'s): its turns run in
    # that agent's house, and only that agent's `cron` tool sees it.
    """
    ALTER TABLE cron_jobs ADD COLUMN agent TEXT NOT NULL DEFAULT 'main';
    """,
]
