"""Configuration: the typed `Settings` and the file they are loaded from and saved to."""

from countbot.config.errors import ConfigError
from countbot.config.loader import (
    MASK,
    config_path_from,
    load_settings,
    masked_settings,
    save_settings_patch,
)
from countbot.config.settings import Settings

__all__ = [
    "MASK",
    "ConfigError",
    "Settings",
    "config_path_from",
    "load_settings",
    "masked_settings",
    "save_settings_patch",
]
