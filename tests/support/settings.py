"""Settings for a real runtime in a temporary folder, talking to the scripted model server."""

from __future__ import annotations

import shutil
from pathlib import Path

from countbot.config.instance import EXAMPLE_CONFIG
from countbot.config.secret import SecretStr
from countbot.config.settings import Settings
from tests.support.scripted_model import ScriptedModelServer


def make_settings(tmp_path: Path, model_server: ScriptedModelServer, **agent: object) -> Settings:
    """Settings for a real runtime in `tmp_path`, talking to the scripted server."""
    settings = Settings()
    settings.model.name = "openai/test-model"
    settings.model.api_base = model_server.base_url
    settings.model.api_key = SecretStr("sk-test-0123456789abcdef")
    settings.model.request_timeout = 10.0
    settings.model.vision = True
    settings.agent.retry_delay = 0.01
    for key, value in agent.items():
        setattr(settings.agent, key, value)
    settings.workspace = tmp_path / "workspace"
    settings.data_dir = tmp_path / "data"
    return settings


def example_copy(folder: Path) -> Path:
    """A copy of the shipped example config in `folder`: tests read and edit the copy, never the
    checkout's file (which an instance must not write, and a test must not depend on)."""
    copy = folder / "config.yaml"
    shutil.copyfile(EXAMPLE_CONFIG, copy)
    return copy
