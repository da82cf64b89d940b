"""Queryable history of executed tool calls ("what did the bot run yesterday, and what failed?")."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping
from typing import Any

from countbot.llm.unicode_repair import repair_text
from countbot.store.database import Database
from countbot.store.masker import Masker

# Enough to see what a call returned; the full output lives in the session's messages.
RESULT_LIMIT = 4000

_COLUMNS = (
    "id",
    "ts",
    "session_id",
    "tool_call_id",
    "name",
    "arguments",
    "user_message",
    "result",
    "status",
    "duration_ms",
    "channel",
)


class ToolCallLog:
    """Tool calls in SQLite; secrets are masked before they are stored when a masker is given."""

    def __init__(self, db: Database, masker: Masker | None = None) -> None:
        self._db = db
        self._masker = masker

    async def record(self, rec: Mapping[str, Any]) -> int:
        """Store one call (the fields of the agent's ToolCallRecord, plus an optional `ts`)."""
        return await self._db.run(_insert, dict(rec), self._masker, time.time())

    async def query(
        self,
        *,
        session_id: str | None = None,
        name: str | None = None,
        status: str | None = None,
        since: float | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Matching calls, newest first; `since` is a Unix timestamp."""
        filters = {"session_id": session_id, "name": name, "status": status}
        where = [f"{column} = :{column}" for column, value in filters.items() if value is not None]
        if since is not None:
            where.append("ts >= :since")
        sql = (
            f"SELECT {', '.join(_COLUMNS)} FROM tool_calls"
            f"{' WHERE ' + ' AND '.join(where) if where else ''}"
            " ORDER BY ts DESC, id DESC LIMIT :limit"
        )
        params = {**filters, "since": since, "limit": max(limit, 0)}
        return await self._db.run(_select, sql, params)


def _insert(
    conn: sqlite3.Connection, rec: dict[str, Any], masker: Masker | None, now: float
) -> int:
    arguments = rec.get("arguments", {})
    user_message = str(rec.get("user_message") or "")
    result = str(rec.get("result") or "")
    if masker is not None:
        arguments = masker.mask_obj(arguments)
        user_message = masker.mask(user_message)
        result = masker.mask(result)  # before truncating, so no secret is cut past recognition
    (row_id,) = conn.execute(
        f"INSERT INTO tool_calls ({', '.join(_COLUMNS[1:])})"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (
            float(rec.get("ts") or now),
            rec["session_id"],
            rec["tool_call_id"],
            rec["name"],
            # A JSON document either way: raw argument strings round-trip as strings.
            repair_text(json.dumps(arguments, ensure_ascii=False, default=str)),
            repair_text(user_message),
            repair_text(_truncate(result)),
            rec.get("status") or "ok",
            float(rec.get("duration_ms") or 0.0),
            rec.get("channel"),
        ),
    ).fetchone()
    return row_id


def _truncate(text: str) -> str:
    if len(text) <= RESULT_LIMIT:
        return text
    return f"{text[:RESULT_LIMIT]}\n… [{len(text) - RESULT_LIMIT} more characters]"


def _select(conn: sqlite3.Connection, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    calls = []
    for row in conn.execute(sql, params):
        call = dict(zip(_COLUMNS, row, strict=True))
        call["arguments"] = json.loads(call["arguments"])
        calls.append(call)
    return calls
