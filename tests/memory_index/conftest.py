"""The daemon fixtures of tests/web, for the memory index's end-to-end tests."""

from __future__ import annotations

from tests.web import conftest as web

start_daemon = web.start_daemon
daemon = web.daemon
