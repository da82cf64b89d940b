"""A workspace folder and a tool context in it, as for the core tools' tests."""

from __future__ import annotations

from tests.tools import conftest as tools

workspace = tools.workspace
ctx = tools.ctx
