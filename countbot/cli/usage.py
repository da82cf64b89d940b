"""`countbot usage`: today's spend against each `budget.*` limit, read from the SQLite store."""

from __future__ import annotations

import click

from countbot.cli.common import echo_lines
from countbot.config.settings import Settings
from countbot.runtime.budget import budget_report
from countbot.store.counters import DailyCounters
from countbot.store.database import Database
from countbot.store.usage import UsageLog

_WHAT = {
    "daily_tokens": "tokens today",
    "daily_cost": "cost today",
    "session_tokens": "tokens per conversation per day",
    "turn_tokens": "tokens per request",
}


async def print_usage(settings: Settings) -> None:
    db = await Database.open(settings.data_dir / "countbot.db")
    try:
        report = await budget_report(settings.budget, UsageLog(db), DailyCounters(db))
    finally:
        await db.close()
    click.echo(f"Today ({report['day']}): {report['tokens']:,} tokens, ${report['cost_usd']:.4f}")
    limits = report["limits"]
    assert isinstance(limits, list)
    lines = [f"  budget.{row['key']:<15} {_line(row)}  ({_WHAT[row['key']]})" for row in limits]
    echo_lines(lines, "No budget limits set (budget.* in config.yaml).")


def _line(row: dict) -> str:
    def shown(value: float) -> str:
        return f"${value:,.4f}" if row["dollars"] else f"{int(value):,}"

    if row["spent"] is None:
        return f"limit {shown(row['limit'])}"
    share = row["spent"] / row["limit"] * 100
    return f"{shown(row['spent'])} of {shown(row['limit'])} ({share:.0f}%)"
