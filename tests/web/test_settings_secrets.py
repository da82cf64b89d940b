"""The settings API of a real daemon: what a user types is literal, and keys stay out of
config.yaml (they go to a private secrets.yaml) and out of every response."""

from __future__ import annotations

import stat

import pytest
import yaml

from tests.support.scripted_model import ScriptedModelServer
from tests.web.conftest import Daemon
from tests.web.test_api import run_turn

ENV_SECRET = "sk-env-secret-0123456789abcdef"
TYPED_KEY = "sk-typed-in-the-browser-0123456789"


async def test_a_persona_named_like_an_environment_variable_stays_that_name(
    daemon: Daemon, model_server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CB_SOME_API_KEY", ENV_SECRET)
    async with daemon.http() as http:
        response = await http.put("/api/settings", json={"persona": {"name": "${CB_SOME_API_KEY}"}})
        assert response.status_code == 200, response.text
        assert response.json()["persona"]["name"] == "${CB_SOME_API_KEY}"
        assert ENV_SECRET not in response.text
        again = await http.get("/api/settings")
        assert again.json()["persona"]["name"] == "${CB_SOME_API_KEY}"
    await run_turn(daemon, "literal", "who are you?")
    system = model_server.requests[-1]["messages"][0]["content"]
    assert "${CB_SOME_API_KEY}" in system and ENV_SECRET not in system


async def test_a_key_typed_on_the_settings_page_goes_to_the_secrets_file(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    config = daemon.settings.config_path
    assert config is not None
    async with daemon.http() as http:
        response = await http.put("/api/settings", json={"model": {"api_key": TYPED_KEY}})
        assert response.status_code == 200, response.text
        assert response.json()["model"]["api_key"] == "********"
        assert TYPED_KEY not in response.text
    text = config.read_text(encoding="utf-8")
    assert TYPED_KEY not in text
    assert yaml.safe_load(text)["model"]["api_key"] == "${secret:model.api_key}"
    secrets = config.parent / "secrets.yaml"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert yaml.safe_load(secrets.read_text(encoding="utf-8")) == {"model.api_key": TYPED_KEY}
    live = daemon.context.runtime.settings.model.api_key
    assert live is not None and live.get_secret_value() == TYPED_KEY
    # The new key is masked from now on, and the turn still works with it.
    assert TYPED_KEY not in daemon.context.runtime.masker.mask(f"echo {TYPED_KEY}")
    done = await run_turn(daemon, "after-key", "hello")
    assert done["type"] == "done"
