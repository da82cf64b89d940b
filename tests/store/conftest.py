"""A real SQLite database in the test's temporary folder."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from countbot.store.database import Database
from countbot.store.sessions import SessionStore


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = await Database.open(tmp_path / "data" / "countbot.db")
    try:
        yield database
    finally:
        await database.close()


@pytest.fixture
def sessions(db: Database) -> SessionStore:
    return SessionStore(db)
