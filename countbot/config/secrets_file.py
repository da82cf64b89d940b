"""`secrets.yaml`: the keys typed on the settings page, kept out of `config.yaml`.

The file sits beside the config file, is written with mode 0600 (owner only), and maps a name to
a value (`model.api_key: sk-…`). `config.yaml` refers to an entry as `${secret:model.api_key}`;
the loader resolves the reference, so the key is never written into the config in plain text.
Values in this file are literal: nothing in them is expanded.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml

from countbot.config.errors import ConfigError
from countbot.config.file_write import replace_file
from countbot.config.yaml_errors import explain_yaml_error

FILE_NAME = "secrets.yaml"
MODE = 0o600
_HEADER = (
    "# Secrets typed on CountBot's settings page, referenced from config.yaml as\n"
    "# ${secret:<name>}. Keep this file private (mode 0600); never commit it.\n"
)


def secrets_path(config_path: Path) -> Path:
    """Where the secrets of the config at `config_path` live: `secrets.yaml` beside it."""
    return config_path.parent / FILE_NAME


def reference(name: str) -> str:
    """How `config.yaml` names the secret `name`."""
    return "${secret:" + name + "}"


def read_secrets(path: Path) -> dict[str, str]:
    """The name → value entries of the secrets file (empty when there is none)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"Cannot read the secrets file {path}: {err}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError(explain_yaml_error(err, text, f"the secrets file {path}")) from None
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in data.items()
    ):
        raise ConfigError(f"The secrets file {path} must hold `name: value` lines of text")
    return data


def write_secrets(path: Path, secrets: Mapping[str, str]) -> None:
    """Replace the secrets file atomically; it is created and kept readable by its owner only."""
    body = yaml.safe_dump(dict(sorted(secrets.items())), allow_unicode=True) if secrets else ""
    replace_file(path, _HEADER + body, MODE, "secrets file")
