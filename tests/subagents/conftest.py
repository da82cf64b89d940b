"""Subagents run in a real daemon (see tests/web/conftest.py) against the scripted model."""

from __future__ import annotations

from tests.store import conftest as store
from tests.web import conftest as web

# The daemon fixtures, shared with the protocol tests, and the store's real database.
start_daemon = web.start_daemon
daemon = web.daemon
daemon_with_telegram = web.daemon_with_telegram
db = store.db
