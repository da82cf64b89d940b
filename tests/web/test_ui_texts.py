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
