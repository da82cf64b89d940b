"""Storage: SQLite (sessions, messages, tool calls, usage) and the JSONL audit log."""

from countbot.store.audit import AuditLog
from countbot.store.database import Database, DatabaseClosedError
from countbot.store.masker import Masker
from countbot.store.sessions import SessionInfo, SessionStore, Window
from countbot.store.tool_calls import ToolCallLog
from countbot.store.usage import UsageLog

__all__ = [
    "AuditLog",
    "Database",
    "DatabaseClosedError",
    "Masker",
    "SessionInfo",
    "SessionStore",
    "ToolCallLog",
    "UsageLog",
    "Window",
]
