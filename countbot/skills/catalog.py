"""A snapshot of the known skills and the views of it the prompt and tools need."""

from __future__ import annotations

from dataclasses import dataclass

from countbot.skills.skill import Skill


@dataclass(frozen=True, slots=True)
class SkillCatalog:
    """Skills by name (workspace ones already override built-ins), sorted by name."""

    skills: tuple[Skill, ...]

    def get(self, name: str) -> Skill | None:
        return next((skill for skill in self.skills if skill.name == name), None)

    def always_on(self) -> list[Skill]:
        """Skills whose full text belongs in every system prompt."""
        return [
            s for s in self.skills if s.always and s.available and s.enabled and s.model_invocable
        ]

    def user_invocable(self, name: str) -> Skill | None:
        """The skill `/name` loads for a turn: enabled, available and not closed to users."""
        skill = self.get(name)
        ok = skill is not None and skill.enabled and skill.available and skill.user_invocable
        return skill if ok else None

    def summary_lines(self) -> list[str]:
        """One line per enabled skill not loaded in full: name, description, availability."""
        loaded = {skill.name for skill in self.always_on()}
        lines: list[str] = []
        for skill in self.skills:
            if not skill.enabled or not skill.model_invocable or skill.name in loaded:
                continue
            line = f"- {skill.name}: {' '.join(skill.description.split()) or '(no description)'}"
            if not skill.available:
                line += f" [unavailable: {skill.unavailable_reason}]"
            lines.append(line)
        return lines
