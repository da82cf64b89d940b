"""What the user answered "Always allow" to: one row per agent, tool and exact key, until revoked.

A rule belongs to the agent whose turn asked (`agents:` in config.yaml): another agent asking
the same is asked again. Kept in SQLite so the answer survives a restart; readable and revocable
through the REST API (`/api/approvals`) or any SQLite tool.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from countbot.store.database import Database, exists


class ApprovalRules:
    """The "Always allow" list of the approval broker, by agent."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def allows(self, agent: str, tool: str, key: str) -> bool:
        return await self._db.run(_allows, agent, tool, key)

    async def allow(
        self, agent: str, tool: str, key: str, *, summary: str, allowed_by: str
    ) -> None:
        await self._db.run(_allow, agent, tool, key, summary, allowed_by, time.time())

    async def revoke(self, agent: str, tool: str, key: str) -> bool:
        """Forget one rule; False when there was none."""
        return await self._db.run(_revoke, agent, tool, key)

    async def list(self) -> list[dict[str, Any]]:
        """Every agent's rules, newest first."""
        return await self._db.run(_list)


def _allows(conn: sqlite3.Connection, agent: str, tool: str, key: str) -> bool:
    return exists(
        conn,
        "SELECT 1 FROM approval_rules WHERE agent = ? AND tool = ? AND key = ?",
        (agent, tool, key),
    )


def _allow(
    conn: sqlite3.Connection,
    agent: str,
    tool: str,
    key: str,
    summary: str,
    allowed_by: str,
    now: float,
) -> None:
    conn.execute(
        "INSERT INTO approval_rules (agent, tool, key, summary, allowed_by, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (agent, tool, key) DO NOTHING",
        (agent, tool, key, summary, allowed_by, now),
    )


def _revoke(conn: sqlite3.Connection, agent: str, tool: str, key: str) -> bool:
    cursor = conn.execute(
        "DELETE FROM approval_rules WHERE agent = ? AND tool = ? AND key = ?", (agent, tool, key)
    )
    return cursor.rowcount > 0


def _list(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT agent, tool, key, summary, allowed_by, created_at FROM approval_rules"
        " ORDER BY created_at DESC"
    ).fetchall()
    columns = ("agent", "tool", "key", "summary", "allowed_by", "created_at")
    return [dict(zip(columns, row, strict=True)) for row in rows]
