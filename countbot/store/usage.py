"""Token and cost accounting, kept as one running row per (local day, session, model, purpose).

Aggregating on write keeps the table small (a row per model a session used that day) and makes
every report a scan of a few hundred rows at most.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from countbot.common.charge import Charge
from countbot.store.database import Database

_SUMS = (
    "SUM(requests) AS requests, SUM(prompt_tokens) AS prompt_tokens,"
    " SUM(completion_tokens) AS completion_tokens,"
    " SUM(prompt_tokens + completion_tokens) AS total_tokens, SUM(cost_usd) AS cost_usd,"
    " SUM(cached_tokens) AS cached_tokens, SUM(cache_write_tokens) AS cache_write_tokens,"
    " SUM(recall_tokens) AS recall_tokens"
)
# What a model call was for, when it was not the turn's answer.
ANSWER = "answer"


@dataclass(frozen=True, slots=True)
class Shares:
    """Parts of a call's prompt tokens shown apart: read from the provider's prompt cache,
    written to it, and auto-recall's block."""

    cached: int = 0
    cache_written: int = 0
    recall: int = 0


class UsageLog:
    """What the models cost, by day and by session."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(
        self,
        session_id: str,
        model: str,
        prompt_tokens: int,
        completion_tokens: int,
        cost_usd: float,
        ts: float | None = None,
        *,
        purpose: str = ANSWER,
        shares: Shares = Shares(),
    ) -> asyncio.Future[None]:
        """Count one model request made for `purpose`; `ts` (default now) picks the local day it
        belongs to. Queued at the call (await the result): a write beside it shares its
        hand-off."""
        write = self.write(
            session_id,
            model,
            prompt_tokens,
            completion_tokens,
            cost_usd,
            ts,
            purpose=purpose,
            shares=shares,
        )
        return self._db.run(write)

    @staticmethod
    def write(
        session_id: str,
        model: str,
        prompt_tokens: int,
        completion_tokens: int,
        cost_usd: float,
        ts: float | None = None,
        *,
        purpose: str = ANSWER,
        shares: Shares = Shares(),
    ) -> Callable[[sqlite3.Connection], None]:
        """`add`'s write, to run in another store's transaction (`SessionStore.append`'s
        `charge`: an answer and what it cost, committed as one)."""
        ts = time.time() if ts is None else ts
        row = (
            _local_day(ts),
            session_id,
            model,
            purpose,
            prompt_tokens,
            completion_tokens,
            shares.cached,
            shares.cache_written,
            shares.recall,
            cost_usd,
            ts,
        )
        return functools.partial(_upsert, row=row)

    def charge(self, charge: Charge, purpose: str) -> asyncio.Future[None]:
        """Count `charge`, made for `purpose` (as `add`)."""
        return self._db.run(self.charged(charge, purpose))

    @staticmethod
    def charged(charge: Charge, purpose: str = ANSWER) -> Callable[[sqlite3.Connection], None]:
        """`write` of `charge`, made for `purpose`."""
        return UsageLog.write(
            charge.session_id,
            charge.model,
            charge.prompt_tokens,
            charge.completion_tokens,
            charge.cost_usd,
            purpose=purpose,
            shares=Shares(charge.cached_tokens, charge.cache_write_tokens, charge.recall_tokens),
        )

    async def by_day(self, days: int = 30) -> list[dict[str, Any]]:
        """Totals for each of the last `days` local days that saw use, newest first."""
        first = (dt.date.today() - dt.timedelta(days=max(days, 1) - 1)).isoformat()
        return await self._db.run(
            _rows,
            f"SELECT day, {_SUMS} FROM usage WHERE day >= ? GROUP BY day ORDER BY day DESC",
            (first,),
        )

    async def by_agent(self, days: int = 30) -> list[dict[str, Any]]:
        """Totals per agent over the last `days` local days (a deleted session's: `main`)."""
        first = (dt.date.today() - dt.timedelta(days=max(days, 1) - 1)).isoformat()
        return await self._db.run(
            _rows,
            f"SELECT coalesce(s.agent, 'main') AS agent, {_SUMS}"
            " FROM usage AS u LEFT JOIN sessions AS s ON s.id = u.session_id"
            " WHERE u.day >= ? GROUP BY 1 ORDER BY cost_usd DESC, total_tokens DESC",
            (first,),
        )

    async def by_session(self, limit: int = 50) -> list[dict[str, Any]]:
        """Totals per session (with its title and agent, None once deleted), most recently used
        first."""
        return await self._db.run(
            _rows,
            f"SELECT u.session_id, s.title, s.agent, {_SUMS}, MAX(u.last_ts) AS last_ts"
            " FROM usage AS u LEFT JOIN sessions AS s ON s.id = u.session_id"
            " GROUP BY u.session_id ORDER BY last_ts DESC LIMIT ?",
            (max(limit, 0),),
        )

    async def by_purpose(self, days: int = 30) -> list[dict[str, Any]]:
        """Totals per purpose over the last `days` local days (what housekeeping costs)."""
        first = (dt.date.today() - dt.timedelta(days=max(days, 1) - 1)).isoformat()
        return await self._db.run(
            _rows,
            f"SELECT purpose, {_SUMS} FROM usage WHERE day >= ? GROUP BY purpose"
            " ORDER BY cost_usd DESC, total_tokens DESC",
            (first,),
        )

    async def today(
        self, session_id: str | None = None, agent: str | None = None
    ) -> dict[str, Any]:
        """Today's tokens and cost in all sessions (of `agent` only, when named), and
        `session_tokens` in `session_id`."""
        return await self._db.run(_today, _local_day(time.time()), session_id or "", agent)

    async def totals(self) -> dict[str, Any]:
        """Everything ever recorded; zeros when nothing has been."""
        (row,) = await self._db.run(_rows, f"SELECT {_SUMS} FROM usage", ())
        return {key: value or 0 for key, value in row.items()}


def _local_day(ts: float) -> str:
    return dt.date.fromtimestamp(ts).isoformat()


def _today(
    conn: sqlite3.Connection, day: str, session_id: str, agent: str | None
) -> dict[str, Any]:
    tokens, cost, session_tokens = conn.execute(
        "SELECT coalesce(SUM(prompt_tokens + completion_tokens), 0), coalesce(SUM(cost_usd), 0),"
        " coalesce(SUM(CASE WHEN session_id = ? THEN prompt_tokens + completion_tokens END), 0)"
        " FROM usage WHERE day = ?"
        " AND (? IS NULL OR session_id IN (SELECT id FROM sessions WHERE agent = ?))",
        (session_id, day, agent, agent),
    ).fetchone()
    return {"day": day, "tokens": tokens, "cost_usd": cost, "session_tokens": session_tokens}


def _upsert(conn: sqlite3.Connection, row: tuple[Any, ...]) -> None:
    conn.execute(
        "INSERT INTO usage (day, session_id, model, purpose, requests, prompt_tokens,"
        " completion_tokens, cached_tokens, cache_write_tokens, recall_tokens, cost_usd, last_ts)"
        " VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (day, session_id, model, purpose) DO UPDATE SET"
        " requests = requests + 1,"
        " prompt_tokens = prompt_tokens + excluded.prompt_tokens,"
        " completion_tokens = completion_tokens + excluded.completion_tokens,"
        " cached_tokens = cached_tokens + excluded.cached_tokens,"
        " cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,"
        " recall_tokens = recall_tokens + excluded.recall_tokens,"
        " cost_usd = cost_usd + excluded.cost_usd,"
        " last_ts = MAX(last_ts, excluded.last_ts)",
        row,
    )


def _rows(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
    cursor = conn.execute(sql, params)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor]
