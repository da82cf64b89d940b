"""`/skillname args`: the user loads a skill for one turn, from any surface.

Chat channels keep their own commands (/new, /stop, ...) and pass every other `/word` on as a
message, so this one place serves the web UI, Telegram and the CLI alike. The skill's text goes
into the turn's context (kept with the message in the history), the rest is the message.
"""

from __future__ import annotations

import re

from countbot.common.authorship import OWNER, Author, Part
from countbot.skills.loader import SkillsLoader

_INVOCATION = re.compile(r"/([A-Za-z0-9][\w.-]*)(?:@\w+)?(?:\s+(.*))?", re.DOTALL)


async def invoked_skill(text: str, skills: SkillsLoader) -> tuple[str, Part] | None:
    """(message, the skill's part) when `text` is `/name args` naming a user-invocable skill,
    else None."""
    match = _INVOCATION.fullmatch(text.strip())
    if match is None:
        return None
    skill = (await skills.catalog()).user_invocable(match.group(1))
    if skill is None:
        return None
    args = (match.group(2) or "").strip()
    # A workspace skill may come from anyone: its text is a stranger's (`countbot/dataflow/`).
    author = OWNER if skill.source == "builtin" else Author("skill", skill.name)
    note = (
        f"[The user loaded the skill {skill.name!r} for this message; follow it. Its folder is "
        f"{skill.folder}.]"
    )
    return args or f"Use the skill {skill.name}.", Part("skill", skill.body, author, note)
