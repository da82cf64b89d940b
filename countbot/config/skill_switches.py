"""Switching a skill on or off: `skills.disabled` in config.yaml, then the live settings.

The Skills page and `countbot skills enable|disable` both write through here.
"""

from __future__ import annotations

from countbot.config.loader import save_settings_patch
from countbot.config.settings import Settings


def save_skill_switch(settings: Settings, name: str, enabled: bool) -> None:
    """Write the new list to the config file (when there is one), then to `settings`.

    Blocking file I/O: run it in a worker thread from async code. Raises ConfigError.
    """
    disabled = set(settings.skills.disabled)
    if enabled:
        disabled.discard(name)
    else:
        disabled.add(name)
    wanted = sorted(disabled)
    if wanted == settings.skills.disabled:
        return
    if settings.config_path is not None:
        save_settings_patch(settings.config_path, {"skills": {"disabled": wanted}})
    settings.skills.disabled = wanted
