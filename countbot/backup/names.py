"""How backup archives are named: by their UTC time, so they sort by age (the schedule keeps the
newest by name)."""

from __future__ import annotations

from datetime import UTC, datetime

PATTERN = "countbot-backup-*.tar.gz"


def default_name(now: datetime | None = None) -> str:
    """`countbot-backup-20261129-063000.tar.gz`."""
    return f"countbot-backup-{now or datetime.now(UTC):%Y%m%d-%H%M%S}.tar.gz"
