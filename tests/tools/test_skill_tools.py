"""read_skill: full instructions with the folder, and clear errors for skills it cannot give."""

from __future__ import annotations

from pathlib import Path

import pytest

from countbot.skills.loader import SkillsLoader
from countbot.tools.base import ToolContext
from countbot.tools.skill_tools import ReadSkillTool

SHIPPED_SKILLS = Path(__file__).resolve().parents[2] / "skills"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext("s1", tmp_path)


@pytest.fixture
def workspace_skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    (root / "needy").mkdir(parents=True)
    (root / "needy" / "SKILL.md").write_text(
        "---\nname: needy\ndescription: d\nrequires:\n  env: [COUNTBOT_TEST_UNSET_VAR]\n---\nx\n"
    )
    return root


async def test_returns_the_body_and_the_folder(workspace_skills: Path, ctx: ToolContext) -> None:
    tool = ReadSkillTool(SkillsLoader(SHIPPED_SKILLS, workspace_skills))
    result = await tool.execute({"name": "summarize"}, ctx)
    assert not result.is_error
    assert result.content.startswith(
        f"# Skill: summarize\nFolder: {SHIPPED_SKILLS / 'summarize'} (paths in the skill are"
    )
    assert "`web_fetch`" in result.content
    assert "description:" not in result.content  # the frontmatter is not repeated


async def test_unknown_skill_lists_the_ones_there_are(
    workspace_skills: Path, ctx: ToolContext
) -> None:
    tool = ReadSkillTool(SkillsLoader(SHIPPED_SKILLS, workspace_skills))
    result = await tool.execute({"name": "astrology"}, ctx)
    assert result.is_error
    assert "no skill named 'astrology'" in result.content and "summarize" in result.content


async def test_unavailable_skill_says_what_it_needs(
    workspace_skills: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COUNTBOT_TEST_UNSET_VAR", raising=False)
    tool = ReadSkillTool(SkillsLoader(None, workspace_skills))
    result = await tool.execute({"name": "needy"}, ctx)
    assert result.is_error and "needs env var COUNTBOT_TEST_UNSET_VAR" in result.content


async def test_disabled_skill_cannot_be_read(workspace_skills: Path, ctx: ToolContext) -> None:
    loader = SkillsLoader(SHIPPED_SKILLS, workspace_skills, disabled=["weather"])
    result = await ReadSkillTool(loader).execute({"name": "weather"}, ctx)
    assert result.is_error and "no skill named 'weather'" in result.content
    assert "weather" not in result.content.split("available skills:")[1]
