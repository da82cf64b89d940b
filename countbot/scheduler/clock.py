"""Time as the scheduler sees it: an injectable clock, so tests move time instead of waiting."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

# Returns an aware datetime; the daemon's is `utc_now`, a test's is whatever it sets.
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def moment(ts: float) -> datetime:
    """An aware UTC datetime for a stored Unix time."""
    return datetime.fromtimestamp(ts, UTC)
