"""The focused system prompt of a subagent: its task, the workspace, its tools, how it reports.

A subagent is not a conversation: no persona, skills catalog or standing instructions, only what
the task needs. The safety rules are the same as the assistant's.
"""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from typing import Any

from countbot.agent.context.prompt import SAFETY_RULES, PromptBuilder

SUBAGENT_ROLE = """\
# Your role
You are a subagent of a personal AI assistant running on the user's own machine. The assistant \
handed you one task to do in the background. Nobody reads your messages while you work and you \
cannot ask questions: do the task with the tools you have, then end with your report.
- Work inside the workspace ({workspace}).
- Act, don't narrate: call tools instead of describing what you would do. Check every result; \
never report success you did not see.
- Your final answer is your report to the assistant, who passes it on to the user: say what you \
found or did, concretely, and what failed or is left. Do not address the user or greet anyone."""


class SubagentContext(PromptBuilder):
    """A PromptBuilder whose system prompt is the subagent's task brief (see the module doc)."""

    def __init__(self, *, task: str, label: str, tool_names: Sequence[str], **builder: Any) -> None:
        """`builder`: PromptBuilder's arguments (workspace, time zone, ...), as the assistant's."""
        super().__init__(tool_names=tool_names, **builder)
        tools = ", ".join(tool_names) if tool_names else "none"
        self._brief = "\n\n".join(
            [
                SUBAGENT_ROLE.format(workspace=self._workspace),
                f"# Tools you may use\n{tools}",
                SAFETY_RULES,
                f"# Your task ({label})\n{task}",
            ]
        )

    def system_prompt_soon(self) -> Coroutine[Any, Any, str]:
        """The brief: no files to look at."""
        return _ready(self._brief)


async def _ready(text: str) -> str:
    return text
