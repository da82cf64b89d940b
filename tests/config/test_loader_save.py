"""Saving settings from the web UI's settings page, and showing them without secrets."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from countbot.config.loader import (
    MASK,
    ConfigError,
    load_settings,
    masked_settings,
    save_settings_patch,
)
from tests.support.settings import example_copy

SECRET = "sk-live-0123456789abcdefghij"
SEARCH_SECRET = "brave-0123456789"


def write(folder: Path, text: str) -> Path:
    path = folder / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = write(
        tmp_path,
        "# My assistant.\n"
        "model:\n"
        "  name: gpt-4o-mini   # the cheap one\n"
        f"  api_key: {SECRET}\n"
        "  temperature: 0.7\n"
        "persona:\n"
        "  name: Ada\n",
    )
    path.chmod(0o640)
    return path


# -- masked_settings -------------------------------------------------------------------------


def test_masked_settings_never_contain_a_secret(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        f"model:\n  name: gpt-4o-mini\n  api_key: {SECRET}\n"
        f"  api_base: https://proxy.example.com/v1?key={SECRET}\n"
        f"tools:\n  web:\n    search_api_key: {SEARCH_SECRET}\n",
    )
    shown = masked_settings(load_settings(path, env={}))
    text = json.dumps(shown)  # JSON-ready, as the settings API sends it
    assert SECRET not in text
    assert SEARCH_SECRET not in text
    assert shown["model"]["api_key"] == MASK
    assert shown["tools"]["web"]["search_api_key"] == MASK
    assert shown["model"]["name"] == "gpt-4o-mini"
    assert shown["model"]["temperature"] == 0.7


def test_unset_secrets_show_as_empty(tmp_path: Path) -> None:
    shown = masked_settings(load_settings(write(tmp_path, ""), env={}))
    assert shown["model"]["api_key"] == ""
    assert shown["web"]["token"] == ""
    assert shown["workspace"] == str(tmp_path / "data" / "workspace")


# -- save_settings_patch ---------------------------------------------------------------------


def test_patch_round_trips_and_keeps_comments_and_mode(config: Path) -> None:
    save_settings_patch(config, {"model": {"temperature": 0.2}, "persona": {"name": "Grace"}})
    settings = load_settings(config, env={})
    assert settings.model.temperature == 0.2
    assert settings.persona.name == "Grace"
    assert settings.model.api_key is not None
    assert settings.model.api_key.get_secret_value() == SECRET
    text = config.read_text(encoding="utf-8")
    assert "# My assistant." in text
    assert "name: gpt-4o-mini   # the cheap one" in text
    assert stat.S_IMODE(config.stat().st_mode) == 0o640


def test_new_sections_are_added(config: Path) -> None:
    save_settings_patch(config, {"tools": {"web": {"search_backend": "brave"}}, "timezone": "UTC"})
    settings = load_settings(config, env={})
    assert settings.tools.web.search_backend == "brave"
    assert settings.timezone == "UTC"
    assert settings.persona.name == "Ada"


def test_masked_form_sent_back_leaves_the_secret_unchanged(config: Path) -> None:
    shown = masked_settings(load_settings(config, env={}))
    shown["model"]["name"] = "gpt-4.1-mini"
    save_settings_patch(config, shown)
    settings = load_settings(config, env={})
    assert settings.model.name == "gpt-4.1-mini"
    assert settings.model.api_key is not None
    assert settings.model.api_key.get_secret_value() == SECRET
    assert MASK not in config.read_text(encoding="utf-8")


def test_unchanged_values_keep_their_environment_references(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CB_TEST_KEY", SECRET)
    monkeypatch.setenv("CB_TEST_BASE", "http://127.0.0.1:11434")
    path = write(
        tmp_path, "model:\n  api_key: ${CB_TEST_KEY}\n  api_base: ${CB_TEST_BASE}\n  name: a\n"
    )
    shown = masked_settings(load_settings(path))
    shown["model"]["name"] = "b"
    save_settings_patch(path, shown)
    text = path.read_text(encoding="utf-8")
    assert "${CB_TEST_KEY}" in text
    assert "${CB_TEST_BASE}" in text
    assert SECRET not in text
    assert load_settings(path).model.name == "b"


def test_a_new_secret_replaces_the_old_one_and_empty_clears_it(config: Path) -> None:
    save_settings_patch(config, {"model": {"api_key": "sk-new-key"}})
    key = load_settings(config, env={}).model.api_key
    assert key is not None
    assert key.get_secret_value() == "sk-new-key"
    save_settings_patch(config, {"model": {"api_key": ""}})
    assert load_settings(config, env={}).model.api_key is None


def test_placeholder_inside_a_longer_value_is_refused(config: Path) -> None:
    before = config.read_text(encoding="utf-8")
    with pytest.raises(ConfigError, match="masked placeholder"):
        save_settings_patch(config, {"model": {"api_base": f"https://x.example/?key={MASK}"}})
    assert config.read_text(encoding="utf-8") == before


def test_invalid_patch_leaves_the_file_untouched(config: Path) -> None:
    before = config.read_text(encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        save_settings_patch(config, {"model": {"temperature": 5, "temprature": 1}})
    assert "`model.temperature` must be ≤ 2 (got 5)" in caught.value.problems
    assert "unknown key `model.temprature` (did you mean `temperature`?)" in caught.value.problems
    assert config.read_text(encoding="utf-8") == before
    assert [p.name for p in config.parent.iterdir()] == ["config.yaml"]  # no temp file left


def test_patch_creates_a_missing_file_readable_only_by_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    save_settings_patch(path, {"model": {"name": "deepseek/deepseek-chat", "api_key": SECRET}})
    assert load_settings(path, env={}).model.name == "deepseek/deepseek-chat"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_patch_writes_through_a_symlinked_config(config: Path) -> None:
    link = config.parent / "link.yaml"
    link.symlink_to(config)
    save_settings_patch(link, {"persona": {"name": "Grace"}})
    assert link.is_symlink()
    assert load_settings(config, env={}).persona.name == "Grace"


def test_patch_on_a_file_with_a_block_value_rewrites_it_correctly(tmp_path: Path) -> None:
    path = write(tmp_path, "persona:\n  personality: |\n    calm\n    kind\n  name: Ada\n")
    save_settings_patch(path, {"persona": {"personality": "bold\nand loud"}})
    settings = load_settings(path, env={})
    assert settings.persona.personality == "bold\nand loud"
    assert settings.persona.name == "Ada"


def test_shipped_config_saves_in_place_without_losing_comments(tmp_path: Path) -> None:
    path = example_copy(tmp_path)
    shipped = path.read_text(encoding="utf-8")
    shown = masked_settings(load_settings(path, env={}))
    shown["model"]["name"] = "anthropic/claude-sonnet-4-5"
    shown["model"]["fallbacks"] = ["gpt-4o-mini"]
    save_settings_patch(path, shown)
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) == len(shipped.splitlines())
    assert text.count("#") == shipped.count("#")
    settings = load_settings(path, env={})
    assert settings.model.name == "anthropic/claude-sonnet-4-5"
    assert settings.model.fallbacks == ["gpt-4o-mini"]


def test_unreadable_config_reports_a_syntax_error_and_is_not_overwritten(tmp_path: Path) -> None:
    path = write(tmp_path, "model: [unclosed\n")
    with pytest.raises(ConfigError, match="YAML syntax error"):
        save_settings_patch(path, {"model": {"name": "x"}})
    assert path.read_text(encoding="utf-8") == "model: [unclosed\n"
    assert os.listdir(tmp_path) == ["config.yaml"]


def test_file_with_duplicate_keys_must_be_fixed_before_saving(tmp_path: Path) -> None:
    text = "model:\n  name: a\nmodel:\n  name: b\n"
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match="duplicate key `model`"):
        save_settings_patch(path, {"model": {"temperature": 0.1}})
    assert path.read_text(encoding="utf-8") == text


# -- values from the settings page are literal; keys go to secrets.yaml ------------------------


def test_a_new_key_goes_to_a_private_secrets_file_and_config_holds_only_a_reference(
    config: Path,
) -> None:
    save_settings_patch(config, {"model": {"api_key": "sk-typed-on-the-page-0123"}})
    text = config.read_text(encoding="utf-8")
    assert "sk-typed-on-the-page-0123" not in text
    assert "${secret:model.api_key}" in text
    assert "# My assistant." in text  # edited in place, comments kept
    secrets = config.parent / "secrets.yaml"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert "model.api_key: sk-typed-on-the-page-0123" in secrets.read_text(encoding="utf-8")
    key = load_settings(config, env={}).model.api_key
    assert key is not None and key.get_secret_value() == "sk-typed-on-the-page-0123"
    # Cleared on the page: gone from both files.
    save_settings_patch(config, {"model": {"api_key": ""}})
    assert load_settings(config, env={}).model.api_key is None
    assert "sk-typed" not in secrets.read_text(encoding="utf-8")
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600


def test_references_typed_on_the_page_are_never_expanded(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CB_TEST_KEY", SECRET)
    patch = {
        "persona": {"name": "${CB_TEST_KEY}", "personality": "costs $${CB_TEST_KEY:-5} a day"},
        "model": {"fallbacks": ["${CB_TEST_KEY}"], "api_key": "${CB_TEST_KEY}"},
    }
    save_settings_patch(config, patch)
    settings = load_settings(config)
    assert settings.persona.name == "${CB_TEST_KEY}"
    assert settings.persona.personality == "costs $${CB_TEST_KEY:-5} a day"
    assert settings.model.fallbacks == ["${CB_TEST_KEY}"]
    assert settings.model.api_key is not None
    assert settings.model.api_key.get_secret_value() == "${CB_TEST_KEY}"
    assert SECRET not in json.dumps(masked_settings(settings))


def test_environment_references_written_by_hand_still_work_beside_secret_references(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CB_TEST_SEARCH", SEARCH_SECRET)
    path = write(
        tmp_path,
        "model:\n  name: a\n  api_key: ${secret:model.api_key}\n"
        "tools:\n  web:\n    search_api_key: ${CB_TEST_SEARCH}\n",
    )
    (tmp_path / "secrets.yaml").write_text(f"model.api_key: {SECRET}\n")
    settings = load_settings(path)
    assert settings.model.api_key is not None
    assert settings.model.api_key.get_secret_value() == SECRET
    assert settings.tools.web.search_api_key is not None
    assert settings.tools.web.search_api_key.get_secret_value() == SEARCH_SECRET


def test_a_reference_to_a_missing_secret_is_a_clear_error(tmp_path: Path) -> None:
    path = write(tmp_path, "model:\n  name: a\n  api_key: ${secret:model.api_key}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env={})
    assert "secrets.yaml beside the config file has no entry `model.api_key`" in str(caught.value)


def test_the_owners_command_line_may_write_references(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CB_TEST_KEY", SECRET)
    path = tmp_path / "config.yaml"
    patch = {"model": {"name": "a", "api_key": "${CB_TEST_KEY}", "api_base": "${CB_BASE:-x}"}}
    save_settings_patch(path, patch, references=True)
    text = path.read_text(encoding="utf-8")
    assert "${CB_TEST_KEY}" in text and "${CB_BASE:-x}" in text
    assert not (tmp_path / "secrets.yaml").exists()
    settings = load_settings(path)
    assert settings.model.api_key is not None
    assert settings.model.api_key.get_secret_value() == SECRET
    assert settings.model.api_base == "x"
