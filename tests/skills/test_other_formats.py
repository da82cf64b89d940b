"""Skills in the formats of OpenClaw, nanobot, Clawdbot and an unknown vendor load alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from countbot.skills.loader import SkillsLoader
from tests.skills.formats import clawdbot_skill, nanobot_skill, openclaw_skill, unknown_vendor_skill


@pytest.fixture
def loader(tmp_path: Path) -> SkillsLoader:
    skills = tmp_path / "workspace" / "skills"
    for write in (openclaw_skill, nanobot_skill, clawdbot_skill, unknown_vendor_skill):
        write(skills)
    return SkillsLoader(None, skills, has_config=lambda key: key == "model.name")


async def test_openclaw_requirements_and_install_hints(
    loader: SkillsLoader, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PAPERS_API_KEY", raising=False)
    skill = (await loader.catalog()).get("paper-shelf")
    assert skill is not None
    assert skill.requires_env == ("PAPERS_API_KEY",)
    assert skill.requires_any_bins == ("no-such-pdf-tool", "cat")
    assert skill.os == ("linux", "darwin")
    assert skill.missing == ("env var PAPERS_API_KEY",)  # anyBins: cat is enough
    assert skill.install_hints == ("Install poppler",)
    monkeypatch.setenv("PAPERS_API_KEY", "k")
    assert (await loader.catalog()).get("paper-shelf").available  # type: ignore[union-attr]
    # The declared key reaches the skill's commands through the sandbox's env pass-through.
    assert "PAPERS_API_KEY" in await loader.env_names()


async def test_nanobot_skill_says_what_is_missing(
    loader: SkillsLoader, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PLANT_TOKEN", raising=False)
    skill = (await loader.catalog()).get("plant-care")
    assert skill is not None and not skill.available
    assert skill.missing == ("binary no-such-watering-cli", "env var PLANT_TOKEN")
    assert skill.install_hints == ("pip: watering-cli",)
    assert "PLANT_TOKEN" in await loader.env_names()


async def test_clawdbot_flags_hide_it_from_the_model_but_not_the_user(
    loader: SkillsLoader,
) -> None:
    catalog = await loader.catalog()
    skill = catalog.get("release-notes")
    assert skill is not None and skill.available and skill.requires_config == ("model.name",)
    assert not skill.model_invocable and skill.user_invocable
    assert not any(line.startswith("- release-notes") for line in catalog.summary_lines())
    assert catalog.user_invocable("release-notes") is skill


async def test_an_unknown_vendor_block_counts_too(loader: SkillsLoader) -> None:
    catalog = await loader.catalog()
    skill = catalog.get("windows-only")
    assert skill is not None and skill.os == ("win32",) and not skill.user_invocable
    assert skill.missing[0].startswith("os win32")
    assert catalog.user_invocable("windows-only") is None


async def test_a_missing_config_key_is_named(tmp_path: Path) -> None:
    clawdbot_skill(tmp_path / "skills")
    skill = (await SkillsLoader(None, tmp_path / "skills").catalog()).get("release-notes")
    assert skill is not None and skill.missing == ("config model.name",)
