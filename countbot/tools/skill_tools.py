"""Loads a skill's full instructions on demand; the system prompt lists only their summaries."""

from __future__ import annotations

from typing import Any

from countbot.skills.loader import SkillsLoader
from countbot.tools.base import Brings, Tool, ToolContext, ToolResult
from countbot.tools.schema import params, text

_UNTRUSTED: Brings = frozenset({"untrusted"})


class ReadSkillTool(Tool):
    """Returns a skill's SKILL.md body and its folder, where its bundled files live."""

    name = "read_skill"
    description = (
        "Load the full instructions of a skill listed in your system prompt, by name. Read it "
        "before doing a task the skill covers, then follow it."
    )
    parameters = params(
        required={
            "name": text("The skill's name."),
        },
        closed=False,
    )
    idempotent = True

    def __init__(self, skills: SkillsLoader) -> None:
        self._skills = skills

    async def brought(self, args: dict[str, Any]) -> Brings:
        """A workspace skill may come from someone else: its text is untrusted. Shipped ones are
        ours."""
        skill = (await self._skills.catalog()).get(str(args.get("name", "")).strip())
        return _UNTRUSTED if skill is not None and skill.source == "workspace" else frozenset()

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name = str(args.get("name", "")).strip()
        catalog = await self._skills.catalog()
        skill = catalog.get(name)
        if skill is None or not skill.enabled:
            known = ", ".join(s.name for s in catalog.skills if s.enabled) or "none"
            return ToolResult.error(f"no skill named {name!r}; available skills: {known}")
        if not skill.available:
            return ToolResult.error(
                f"skill {name!r} is unavailable ({skill.unavailable_reason}); tell the user "
                "what it needs instead of improvising"
            )
        return ToolResult(
            f"# Skill: {skill.name}\n"
            f"Folder: {skill.folder} (paths in the skill are relative to it)\n\n{skill.body}"
        )
