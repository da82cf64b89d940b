"""A workspace folder and a tool context in it, for the tool tests that need nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from countbot.tools.base import ToolContext


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext("s1", workspace)
