"""The web UI's two languages say the same things: every English text has a Chinese one, and every
chat platform has its setup steps in both (shown beside its fields on the Channels page)."""

from __future__ import annotations

import re
from pathlib import Path

import countbot

STATIC = Path(countbot.__file__).parent / "web" / "static"
PLATFORMS = Path(countbot.__file__).parent / "channels"


def keys(language: str) -> set[str]:
    text = (STATIC / "i18n" / f"{language}.js").read_text(encoding="utf-8")
    return set(re.findall(r'^\s*"([^"]+)":', text, re.MULTILINE))


def test_every_english_text_has_a_chinese_one() -> None:
    # Chinese has more: texts whose English is their source file's own words (persona and skill
    # descriptions, the sandbox status) are translated there only.
    assert keys("en") - keys("zh-CN") == set()


def test_every_platform_has_setup_steps_in_both_languages() -> None:
    platforms = {p.name for p in PLATFORMS.iterdir() if p.is_dir() and p.name != "kit"}
    platforms.discard("__pycache__")
    assert len(platforms) == 8
    for language in ("en", "zh-CN"):
        steps = {k.removeprefix("channelSetup.steps.") for k in keys(language)}
        assert platforms <= steps, (language, platforms - steps)


def test_every_channel_setting_on_the_setup_form_is_named_in_both_languages() -> None:
    """The form labels a setting by `channelSetup.field.<key>` and offers a fixed value by
    `channelSetup.choice.<value>`: a raw config key on the page is a missing text here."""
    from countbot.config.settings import ChannelsSettings
    from countbot.config.structs import choice_fields, field_types

    form = (STATIC / "panels" / "channelSetup.js").read_text(encoding="utf-8")
    hidden = set(re.findall(r'"(\w+)"', re.search(r"HIDDEN = new Set\(\[(.*?)\]", form)[1]))
    wanted: set[str] = set()
    for section in field_types(ChannelsSettings).values():
        # `accounts` never reaches the form: each bot account is a channel row of its own,
        # set up in config.yaml (the manager leaves it out of a platform's settings).
        shown = set(field_types(section)) - hidden - {"accounts"}
        wanted |= {f"channelSetup.field.{key}" for key in shown}
        for values in choice_fields(section).values():
            wanted |= {f"channelSetup.choice.{value}" for value in values}
    for language in ("en", "zh-CN"):
        assert wanted <= keys(language), (language, sorted(wanted - keys(language)))
