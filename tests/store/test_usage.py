from __future__ import annotations

import datetime as dt
import sqlite3

import pytest

from countbot.common.charge import Charge
from countbot.store.database import Database
from countbot.store.sessions import SessionStore
from countbot.store.usage import Shares, UsageLog


def days_ago(days: int, hour: int = 12) -> float:
    """A timestamp at `hour` local time, `days` local days before today."""
    day = dt.date.today() - dt.timedelta(days=days)
    return dt.datetime.combine(day, dt.time(hour)).timestamp()


async def test_requests_add_up_per_day_newest_first(db: Database) -> None:
    usage = UsageLog(db)
    await usage.add("s1", "gpt-4o", 100, 20, 0.01, ts=days_ago(0, hour=1))
    await usage.add("s1", "gpt-4o", 300, 40, 0.03, ts=days_ago(0, hour=23))
    await usage.add("s2", "claude", 50, 5, 0.002, ts=days_ago(0))
    await usage.add("s1", "gpt-4o", 10, 1, 0.001, ts=days_ago(1))
    await usage.add("s1", "gpt-4o", 999, 999, 9.0, ts=days_ago(40))

    rows = await usage.by_day(days=30)

    assert [r["day"] for r in rows] == [
        dt.date.today().isoformat(),
        (dt.date.today() - dt.timedelta(days=1)).isoformat(),
    ]
    today = rows[0]
    assert (today["requests"], today["prompt_tokens"], today["completion_tokens"]) == (3, 450, 65)
    assert today["total_tokens"] == 515
    assert round(today["cost_usd"], 6) == 0.042
    assert len(await usage.by_day(days=1)) == 1
    assert len(await usage.by_day(days=41)) == 3


async def test_sessions_are_totalled_across_days_and_models_with_their_titles(
    db: Database,
) -> None:
    await SessionStore(db).create("s1", title="Budget")
    usage = UsageLog(db)
    await usage.add("s1", "gpt-4o", 100, 10, 0.01, ts=days_ago(2))
    await usage.add("s1", "claude", 200, 20, 0.02, ts=days_ago(1))
    await usage.add("gone", "gpt-4o", 5, 5, 0.5, ts=days_ago(0))

    rows = await usage.by_session()

    assert [(r["session_id"], r["title"]) for r in rows] == [("gone", None), ("s1", "Budget")]
    s1 = rows[1]
    assert (s1["requests"], s1["prompt_tokens"], s1["completion_tokens"]) == (2, 300, 30)
    assert round(s1["cost_usd"], 6) == 0.03
    assert [r["session_id"] for r in await usage.by_session(limit=1)] == ["gone"]


async def test_totals_are_zero_before_any_use_and_sum_everything_after(db: Database) -> None:
    usage = UsageLog(db)
    assert await usage.totals() == {
        "requests": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "total_tokens": 0,
        "cost_usd": 0,
        "cached_tokens": 0,
        "cache_write_tokens": 0,
        "recall_tokens": 0,
    }
    await usage.add("s1", "m", 10, 2, 0.5)
    await usage.add("s2", "m", 20, 3, 0.25, ts=days_ago(100))

    totals = await usage.totals()
    assert (totals["requests"], totals["total_tokens"], totals["cost_usd"]) == (2, 35, 0.75)


async def test_an_answer_and_its_usage_are_committed_together_or_not_at_all(db: Database) -> None:
    sessions, usage = SessionStore(db), UsageLog(db)

    await sessions.append(
        "s1", {"type": "assistant", "text": "42"}, charge=Charge("s1", "gpt-4o", 10, 5, 0.01)
    )
    unstorable = {"type": "assistant", "text": object()}
    with pytest.raises(TypeError):
        await sessions.append("s1", unstorable, charge=Charge("s1", "gpt-4o", 100, 50, 0.1))
    # A price SQLite cannot store: the usage row fails, and the answer goes with it.
    unwritable = Charge("s1", "gpt-4o", 7, 7, object())  # type: ignore[arg-type]
    with pytest.raises(sqlite3.Error):
        await sessions.append("s1", {"type": "assistant", "text": "lost"}, charge=unwritable)
    assert (await usage.totals())["total_tokens"] == 15
    assert [r["text"] for r in await sessions.messages("s1")] == ["42"]


async def test_housekeeping_and_prompt_shares_are_counted_apart(db: Database) -> None:
    usage = UsageLog(db)
    await usage.add("s1", "big", 1000, 50, 0.05, shares=Shares(cached=600, recall=40))
    await usage.add("s1", "big", 1200, 50, 0.04, shares=Shares(cached=900, cache_written=100))
    await usage.add("s1", "small", 3000, 300, 0.003, purpose="summary")
    await usage.add("s1", "small", 2000, 20, 0.002, purpose="memory_flush")
    rows = {row["purpose"]: row for row in await usage.by_purpose()}
    assert rows["answer"]["requests"] == 2 and rows["answer"]["prompt_tokens"] == 2200
    shares = ("cached_tokens", "cache_write_tokens", "recall_tokens")
    assert tuple(rows["answer"][k] for k in shares) == (1500, 100, 40)
    assert rows["summary"]["total_tokens"] == 3300 and rows["memory_flush"]["requests"] == 1
    (today,) = await usage.by_day(1)
    assert today["requests"] == 4 and today["cost_usd"] == pytest.approx(0.095)
