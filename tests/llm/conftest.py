"""A scripted model server per test, and a provider wired to it with a recording sleep."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.scripted_model import ScriptedModelServer


@pytest.fixture
def model_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as server:
        yield server
