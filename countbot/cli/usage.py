"""`countbot usage`: today's spend against each `budget.*` limit, read from the SQLite store."""

from __future__ import annotations

import click

from countbot.cli.common import echo_lines
from countbot.config.settings import Settings
from countbot.runtime.budget import budget_report
from countbot.store.counters import DailyCounters
from countbot.store.database import Database
from countbot.store.usage import UsageLog

_PURPOSES = {
    "answer": "answers",
    "summary": "summaries",
    "memory_flush": "memory before a summary",
}
_WHAT = {
    "daily_tokens": "tokens today",
    "daily_cost": "cost today",
    "session_tokens": "tokens per conversation per day",
    "turn_tokens": "tokens per request",
}


async def print_usage(settings: Settings) -> None:
    db = await Database.open(settings.data_dir / "countbot.db")
    try:
        log = UsageLog(db)
        report = await budget_report(settings.budget, log, DailyCounters(db))
        purposes = await log.by_purpose(days=1)
    finally:
        await db.close()
    click.echo(f"Today ({report['day']}): {report['tokens']:,} tokens, ${report['cost_usd']:.4f}")
    for row in purposes:  # answers, then what housekeeping and recall took of them
        click.echo(f"  {_PURPOSES.get(row['purpose'], row['purpose']):<22} {_spent(row)}")
    limits = report["limits"]
    assert isinstance(limits, list)
    lines = [f"  budget.{row['key']:<15} {_line(row)}  ({_WHAT[row['key']]})" for row in limits]
    echo_lines(lines, "No budget limits set (budget.* in config.yaml).")


def _spent(row: dict) -> str:
    """A purpose's tokens and cost, with the prompt's shares read from the cache and recalled."""
    shares = [
        f"{row[key]:,} {what}"
        for key, what in (("cached_tokens", "from the prompt cache"), ("recall_tokens", "recall"))
        if row[key]
    ]
    extra = f" ({', '.join(shares)})" if shares else ""
    return f"{row['total_tokens']:,} tokens, ${row['cost_usd']:.4f}{extra}"


def _line(row: dict) -> str:
    def shown(value: float) -> str:
        return f"${value:,.4f}" if row["dollars"] else f"{int(value):,}"

    if row["spent"] is None:
        return f"limit {shown(row['limit'])}"
    share = row["spent"] / row["limit"] * 100
    return f"{shown(row['spent'])} of {shown(row['limit'])} ({share:.0f}%)"
