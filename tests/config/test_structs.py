"""The settings' structs: every problem found at its key path, secrets that never show, and
checks that hold for settings made in code as for settings read from a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from countbot.config.loader import ConfigError, load_settings, masked_settings
from countbot.config.problems import explained
from countbot.config.secret import SecretStr
from countbot.config.settings import McpServerSettings, ModelSettings, Settings, WebSettings
from countbot.config.structs import Invalid, replaced, to_data, validate


def problems_in(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env={})
    return caught.value.problems


def test_a_secret_never_shows_in_repr_str_or_data() -> None:
    secret = SecretStr("sk-live-0123456789")
    web = WebSettings(token="tok-0123456789")  # plain text given in code is wrapped at once
    assert "sk-live" not in repr(secret) + str(secret) + f"{secret}"
    assert isinstance(web.token, SecretStr) and "tok-" not in repr(web)
    assert to_data(web)["token"] == "**********"
    assert secret == SecretStr("sk-live-0123456789") != SecretStr("other")
    assert str(SecretStr("")) == "" and not SecretStr("")


def test_oversized_and_out_of_range_values_name_their_key(tmp_path: Path) -> None:
    problems = problems_in(
        tmp_path,
        "web:\n  port: 99999999999999999999999\n"
        "model:\n  temperature: .inf\n  request_timeout: 1e400\n"
        "agent:\n  max_history: -100000000000000000000\n",
    )
    assert any(p.startswith("line 2: `web.port` must be ≤ 65535 (got 9999") for p in problems)
    assert any("`model.temperature` must be ≤ 2 (got inf)" in p for p in problems)
    assert any('`model.request_timeout` is out of range (got "1e400")' in p for p in problems)
    assert any("`agent.max_history` must be ≥ 4 (got -1000" in p for p in problems)


def test_a_wrong_value_inside_a_list_or_a_server_names_its_place(tmp_path: Path) -> None:
    problems = problems_in(
        tmp_path,
        "tools:\n  exec:\n    deny_patterns: ['ok', 7]\n    allow_patterns: ['(a']\n"
        "mcp:\n  servers:\n    notes:\n      args: []\n"
        "    files:\n      url: x\n      timeout: 0\n",
    )
    text = "\n".join(problems)
    assert "`tools.exec.deny_patterns[1]` must be text (got 7)" in text
    assert "`mcp.servers.notes` set exactly one of `command` (stdio) or `url`" in text
    assert "`mcp.servers.files.timeout` must be > 0 (got 0)" in text


def test_a_regular_expression_that_does_not_compile_names_its_key(tmp_path: Path) -> None:
    problems = problems_in(tmp_path, "tools:\n  exec:\n    allow_patterns: ['(a']\n")
    assert "`tools.exec.allow_patterns` '(a' is not a valid regular expression" in problems[0]


def test_a_secret_of_the_wrong_type_is_named_but_not_shown(tmp_path: Path) -> None:
    problems = problems_in(tmp_path, "model:\n  api_key: [sk-live-0123456789]\n")
    assert problems == ["line 2: `model.api_key` must be text"]


def test_the_former_name_of_the_offline_embedder_still_means_it(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("memory:\n  embeddings: wordllama\n", encoding="utf-8")
    assert load_settings(path, env={}).memory.embeddings == "use-multilingual"
    problems = problems_in(tmp_path, "memory:\n  embeddings: bert\n")
    assert "must be one of 'use-multilingual', 'endpoint' or 'off'" in problems[0]


def test_strict_reading_refuses_text_for_numbers_and_lenient_reading_takes_it() -> None:
    assert validate(ModelSettings, {"max_tokens": "2048"}).max_tokens == 2048
    with pytest.raises(Invalid) as caught:
        validate(ModelSettings, {"max_tokens": "2048"}, strict=True, loc=("model",))
    assert explained(caught.value) == ['`model.max_tokens` must be an integer (got "2048")']


def test_a_changed_copy_is_checked_like_a_file() -> None:
    model = ModelSettings(name="gpt-4o-mini", api_key=SecretStr("k"))
    assert replaced(model, temperature=1.5).temperature == 1.5
    assert replaced(model, temperature=1.5).api_key == SecretStr("k")
    with pytest.raises(Invalid):
        replaced(model, temperature=5)
    with pytest.raises(Invalid):
        replaced(McpServerSettings(command="notes"), url="http://127.0.0.1:1/mcp")


def test_masked_settings_hide_every_secret_and_the_config_path(tmp_path: Path) -> None:
    settings = replaced(
        Settings(),
        model=ModelSettings(api_key=SecretStr("sk-live-0123456789")),
        config_path=tmp_path / "config.yaml",
    )
    shown = masked_settings(settings)
    assert shown["model"]["api_key"] == "********" and "config_path" not in shown
    assert "sk-live" not in repr(shown)
