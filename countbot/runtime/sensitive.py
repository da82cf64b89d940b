"""What no tool, log line or sandbox may show: the settings' secret values and the config files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from countbot.common.masking import SecretMasker
from countbot.config.agent_view import other_houses
from countbot.config.secret import SecretStr
from countbot.config.secrets_file import secrets_path
from countbot.config.settings import Settings
from countbot.config.structs import Strict


def secret_masker(settings: Settings) -> SecretMasker:
    """A masker that knows every secret value in the settings, plus the generic patterns.

    Every `SecretStr` field counts, so a secret added to the settings later is masked too.
    """
    masker = SecretMasker()
    for secret in secrets_of(settings):
        masker.add(secret.get_secret_value())
    return masker


def config_files(settings: Settings) -> list[Path]:
    """The config file and its `secrets.yaml`: never readable by a tool (nor in the sandbox)."""
    config = settings.config_path
    return [config, secrets_path(config)] if config else []


def private_paths(settings: Settings) -> list[Path]:
    """What no tool of the agent working in `settings.workspace` may touch, confined or not:
    the config files and the other agents' houses (their workspaces and data)."""
    return [*config_files(settings), *other_houses(settings, settings.workspace)]


def secrets_of(section: Strict) -> Iterator[SecretStr]:
    """Every `SecretStr` in `section` and the sections, servers and maps below it."""
    for name in section.__struct_fields__:
        value = getattr(section, name)
        if isinstance(value, SecretStr):
            yield value
        elif isinstance(value, Strict):
            yield from secrets_of(value)
        elif isinstance(value, dict):  # MCP servers' env and headers, and the servers
            for item in value.values():
                if isinstance(item, SecretStr):
                    yield item
                elif isinstance(item, Strict):
                    yield from secrets_of(item)
