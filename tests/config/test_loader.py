"""Loading `config.yaml`: where it is found, what it may say, and how mistakes are reported."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from countbot.config.fields import key_paths
from countbot.config.instance import EXAMPLE_CONFIG, create_from_example
from countbot.config.loader import (
    SHIPPED_ROOT,
    ConfigError,
    config_path_from,
    load_settings,
    save_settings_patch,
)
from countbot.config.settings import Settings
from countbot.config.structs import to_data
from tests.support.settings import example_copy

# What the loader sets from where the file is, not from what it says.
PLACED = ("workspace", "data_dir", "personas_dir", "skills_dir", "config_path")


def write(folder: Path, text: str, name: str = "config.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def unplaced(settings: Settings) -> dict[str, object]:
    """The settings as data, without the paths the loader resolves."""
    return {key: value for key, value in to_data(settings).items() if key not in PLACED}


def problems_of(path: Path, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env=env or {})
    return str(caught.value)


# -- where the file is -----------------------------------------------------------------------


def test_cli_path_beats_environment_which_beats_the_default() -> None:
    env = {"COUNTBOT_CONFIG": "/etc/countbot.yaml"}
    assert config_path_from("mine.yaml", env) == Path("mine.yaml")
    assert config_path_from(None, env) == Path("/etc/countbot.yaml")
    assert config_path_from(None, {"COUNTBOT_HOME": "/srv/cb"}) == Path("/srv/cb/config.yaml")


def test_load_without_path_reads_the_file_named_by_countbot_config(tmp_path: Path) -> None:
    path = write(tmp_path, "model:\n  name: from-env-var\n", "elsewhere.yaml")
    settings = load_settings(env={"COUNTBOT_CONFIG": str(path)})
    assert settings.model.name == "from-env-var"
    assert settings.config_path == path


def test_missing_default_config_means_defaults_in_the_instance_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the current folder plays no part
    home = tmp_path / "home"
    settings = load_settings(env={"COUNTBOT_HOME": str(home)})
    assert settings.model == Settings().model
    assert settings.agent.max_iterations == 25
    assert settings.workspace == home / "data" / "workspace"
    assert settings.data_dir == home / "data"
    assert settings.config_path == home / "config.yaml"


def test_the_instance_folder_defaults_to_a_folder_in_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config_path_from(None, {}) == tmp_path / ".countbot" / "config.yaml"
    assert load_settings(env={}).data_dir == tmp_path / ".countbot" / "data"


def test_the_shipped_example_is_never_written(tmp_path: Path) -> None:
    before = EXAMPLE_CONFIG.read_bytes()
    with pytest.raises(ConfigError, match="documented example"):
        save_settings_patch(EXAMPLE_CONFIG, {"model": {"name": "openai/gpt-4o-mini"}})
    assert EXAMPLE_CONFIG.read_bytes() == before
    assert not (EXAMPLE_CONFIG.parent / "secrets.yaml").exists()


def test_an_instance_config_starts_as_a_private_copy_of_the_example(tmp_path: Path) -> None:
    config = tmp_path / "new-home" / "config.yaml"
    assert create_from_example(config)
    assert config.read_text(encoding="utf-8") == EXAMPLE_CONFIG.read_text(encoding="utf-8")
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    config.write_text("model:\n  name: mine\n")
    assert not create_from_example(config)  # never replaces the user's own
    assert load_settings(config, env={}).model.name == "mine"


def test_missing_explicit_config_is_an_error(tmp_path: Path) -> None:
    message = problems_of(tmp_path / "nope.yaml")
    assert "nope.yaml" in message
    assert "does not exist" in message


def test_missing_file_named_by_countbot_config_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="COUNTBOT_CONFIG"):
        load_settings(env={"COUNTBOT_CONFIG": str(tmp_path / "nope.yaml")})


def test_empty_file_means_defaults(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, "# nothing set yet\n"), env={})
    assert unplaced(settings) == unplaced(Settings())


def test_section_with_every_key_commented_out_means_defaults(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, "persona:\n  # name: Ada\ntools:\n  exec:\n"), env={})
    assert settings.persona.preset == "assistant"
    assert settings.tools.exec.timeout == 60


# -- paths -----------------------------------------------------------------------------------


def test_relative_paths_resolve_against_the_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    path = write(
        folder,
        "workspace: ws\ndata_dir: ../state\npersonas_dir: my/personas\nskills_dir: /opt/skills\n",
    )
    monkeypatch.chdir(tmp_path)  # the current folder must not matter
    settings = load_settings(path, env={})
    assert settings.workspace == folder / "ws"
    assert settings.data_dir == tmp_path / "state"
    assert settings.personas_dir == folder / "my" / "personas"
    assert settings.skills_dir == Path("/opt/skills")


def test_relative_config_path_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "workspace: ws\n", "custom.yaml")
    monkeypatch.chdir(tmp_path)
    settings = load_settings(Path("custom.yaml"), env={})
    assert settings.config_path == tmp_path / "custom.yaml"
    assert settings.workspace == tmp_path / "ws"


def test_unset_personas_and_skills_dirs_are_the_shipped_folders(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, ""), env={})
    assert settings.personas_dir == SHIPPED_ROOT / "personas"
    assert settings.skills_dir == SHIPPED_ROOT / "skills"
    assert (SHIPPED_ROOT / "countbot" / "__init__.py").is_file()


def test_home_folder_is_expanded(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, "workspace: ~/cb-workspace\n"), env={})
    assert settings.workspace == Path.home() / "cb-workspace"


# -- environment variables -------------------------------------------------------------------


def test_environment_variables_are_substituted_in_strings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'model:\n  name: "${MODEL}"\n  api_key: ${KEY}\n  api_base: http://${HOST}:11434/v1\n',
    )
    settings = load_settings(
        path, env={"MODEL": "ollama_chat/llama3.1", "KEY": "k: 'x' #1", "HOST": "box"}
    )
    assert settings.model.name == "ollama_chat/llama3.1"
    # A value with YAML syntax in it stays one string: substitution happens after parsing.
    assert settings.model.api_key is not None
    assert settings.model.api_key.get_secret_value() == "k: 'x' #1"
    assert settings.model.api_base == "http://box:11434/v1"


def test_default_is_used_when_variable_is_unset_or_empty(tmp_path: Path) -> None:
    path = write(tmp_path, "model:\n  name: ${MODEL:-gpt-4o-mini}\n  temperature: ${T:-0.2}\n")
    assert load_settings(path, env={}).model.name == "gpt-4o-mini"
    assert load_settings(path, env={"MODEL": ""}).model.name == "gpt-4o-mini"
    settings = load_settings(path, env={"MODEL": "deepseek/deepseek-chat", "T": "1.5"})
    assert settings.model.name == "deepseek/deepseek-chat"
    assert settings.model.temperature == 1.5


def test_doubled_dollar_keeps_a_literal_reference(tmp_path: Path) -> None:
    path = write(tmp_path, "tools:\n  exec:\n    deny_patterns: ['echo $${HOME}']\n")
    assert load_settings(path, env={"HOME": "/root"}).tools.exec.deny_patterns == ["echo ${HOME}"]


def test_unset_variable_names_the_key_and_the_variable(tmp_path: Path) -> None:
    message = problems_of(write(tmp_path, "model:\n  name: x\n  api_key: ${OPENAI_API_KEY}\n"))
    assert "`model.api_key`" in message
    assert "OPENAI_API_KEY" in message
    assert "line 3" in message


# -- reporting mistakes ----------------------------------------------------------------------


def test_unknown_key_is_reported_with_a_suggestion(tmp_path: Path) -> None:
    message = problems_of(write(tmp_path, "model:\n  temprature: 0.5\n"))
    assert "unknown key `model.temprature` (did you mean `temperature`?)" in message
    assert "line 2" in message


def test_known_key_in_the_wrong_section_suggests_the_right_one(tmp_path: Path) -> None:
    message = problems_of(write(tmp_path, "temperature: 0.5\n"))
    assert "did you mean `model.temperature`?" in message


def test_value_out_of_range_names_the_key_the_limit_and_the_value(tmp_path: Path) -> None:
    message = problems_of(write(tmp_path, "model:\n  temperature: 5\n"))
    assert "`model.temperature` must be ≤ 2 (got 5)" in message


def test_value_of_the_wrong_type_names_the_key(tmp_path: Path) -> None:
    message = problems_of(write(tmp_path, "agent:\n  max_iterations: lots\n"))
    assert "`agent.max_iterations`" in message
    assert '"lots"' in message


def test_choice_outside_the_allowed_values_lists_them(tmp_path: Path) -> None:
    message = problems_of(write(tmp_path, "tools:\n  web:\n    search_backend: google\n"))
    assert "`tools.web.search_backend` must be one of 'none', 'brave' or 'searxng'" in message


def test_section_written_as_a_value_is_explained(tmp_path: Path) -> None:
    message = problems_of(write(tmp_path, "model: gpt-4o\n"))
    assert '`model` must be a section of `key: value` lines (got "gpt-4o")' in message


def test_every_problem_is_reported_in_one_message(tmp_path: Path) -> None:
    text = (
        "model:\n"
        "  temperature: 9\n"
        "  api_key: ${MISSING_KEY}\n"
        "agent:\n"
        "  max_itterations: 3\n"
        "timezone: Mars/Olympus\n"
        "model:\n"
        "  name: again\n"
    )
    message = problems_of(write(tmp_path, text))
    assert "problems" in message
    # The second `model:` wins in YAML, so the first one's values are not validated.
    assert "duplicate key `model` (first written on line 1)" in message
    assert "unknown key `agent.max_itterations` (did you mean `max_iterations`?)" in message
    assert "`timezone` is not a known time zone" in message
    assert message.index("line 5") < message.index("line 6") < message.index("line 7")


def test_secret_values_are_not_echoed_in_errors(tmp_path: Path) -> None:
    message = problems_of(write(tmp_path, "model:\n  api_key: [sk-live-abcdef0123456789]\n"))
    assert "`model.api_key`" in message
    assert "sk-live" not in message


def test_config_path_cannot_be_set_in_the_file(tmp_path: Path) -> None:
    message = problems_of(write(tmp_path, "config_path: /elsewhere.yaml\n"))
    assert "`config_path`" in message


def test_yaml_syntax_error_reports_line_and_column(tmp_path: Path) -> None:
    message = problems_of(write(tmp_path, "model:\n  name: x\n   temperature: 1\n"))
    assert "YAML syntax error" in message
    assert "line 3" in message
    assert "column" in message


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nmodel:\n  name: x\n  name_only\n  temperature: 1\n",  # runs on into line 5
        "a: 1\nmodel:\n  name: x\n  name_only\nb: 2\n",  # PyYAML gives up on line 5
    ],
)
def test_a_missing_colon_is_reported_on_its_own_line(tmp_path: Path, text: str) -> None:
    message = problems_of(write(tmp_path, text))
    assert "at line 4, column 3: a line that is not `key: value`: add the colon" in message
    assert "4 |   name_only" in message


def test_top_level_that_is_not_a_mapping_is_explained(tmp_path: Path) -> None:
    message = problems_of(write(tmp_path, "- model\n- agent\n"))
    assert "`key: value`" in message


# -- requiring a model -----------------------------------------------------------------------


def test_require_model_explains_how_to_configure_one(tmp_path: Path) -> None:
    path = write(tmp_path, "agent:\n  max_iterations: 5\n")
    assert load_settings(path, env={}).model.name == ""  # fine until a model is needed
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env={}, require_model=True)
    message = str(caught.value)
    assert str(path) in message
    assert "`model.name`" in message
    for example in ("gpt-4o-mini", "anthropic/", "deepseek/", "ollama", "api_base", "${"):
        assert example in message
    assert "countbot onboard" in message


def test_require_model_is_satisfied_by_a_model_name(tmp_path: Path) -> None:
    path = write(tmp_path, "model:\n  name: gpt-4o-mini\n")
    assert load_settings(path, env={}, require_model=True).model.name == "gpt-4o-mini"


# -- the shipped file ------------------------------------------------------------------------


def test_shipped_config_loads_to_the_defaults(tmp_path: Path) -> None:
    shipped = example_copy(tmp_path)
    settings = load_settings(shipped, env={})
    assert unplaced(settings) == unplaced(Settings())
    assert settings.workspace == tmp_path / "data" / "workspace"
    assert settings.personas_dir == SHIPPED_ROOT / "personas"
    with pytest.raises(ConfigError, match="No model is configured"):
        load_settings(shipped, env={}, require_model=True)


def test_shipped_config_documents_every_key(tmp_path: Path) -> None:
    text = example_copy(tmp_path).read_text(encoding="utf-8")
    lines = [line.split("#")[0].strip() for line in text.splitlines()]
    written = {line.split(":")[0] for line in lines if line}
    for key in {str(path[-1]) for path in key_paths()}:
        assert key in written, f"config.yaml does not show `{key}`"
