"""`countbot usage` as a user runs it: today's spend by purpose, read from a real store."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from countbot.store.database import Database
from countbot.store.usage import Shares, UsageLog
from tests.cli.test_chat import run


async def spend(data_dir: Path) -> None:
    db = await Database.open(data_dir / "countbot.db")
    try:
        usage = UsageLog(db)
        shares = Shares(cached=900, recall=40)
        await usage.add("s1", "anthropic/claude-sonnet-4-5", 1_200, 80, 0.0021, shares=shares)
        await usage.add("s1", "openai/small", 3_000, 200, 0.0004, purpose="summary")
    finally:
        await db.close()


def test_usage_shows_what_answers_and_housekeeping_cost_today(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"workspace": "ws", "data_dir": "data"}))
    (tmp_path / "data").mkdir(mode=0o700)
    asyncio.run(spend(tmp_path / "data"))
    result = run("usage", "--config", str(config), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith("4,480 tokens, $0.0025")
    assert "answers" in lines[1] and "1,280 tokens, $0.0021" in lines[1]
    assert "900 from the prompt cache, 40 recall" in lines[1]
    assert "summaries" in lines[2] and "3,200 tokens, $0.0004" in lines[2]
