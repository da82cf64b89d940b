"""The `spawn` and `subagents` tools: hand a task to a background subagent, then follow it.

The tools know nothing of how subagents run: they talk to a small `SubagentControl` port
(`control.py`) that the daemon's subagent manager implements. `spawn` returns at once; the
subagent's report arrives later in the same chat as a new message the model answers.
"""

from __future__ import annotations

from typing import Any

from countbot.subagents.control import SpawnRequest, SubagentControl
from countbot.tools.base import Tool, ToolContext, ToolResult
from countbot.tools.schema import choice, params, text, texts

MAX_LABEL = 60
RESULT_PREVIEW = 2000


class SpawnTool(Tool):
    name = "spawn"
    description = (
        "Hand a self-contained task to a subagent that works on it in the background while you "
        "go on. Returns at once with the subagent's id; its report comes back to you later in "
        "this chat as a new message, and you then tell the user what came back. Several spawns "
        "in one response run in parallel. The task text is all the subagent knows: include every "
        "detail it needs. Optionally give a short label and the names of the only tools it may "
        "use."
    )
    parameters = params(
        required={
            "task": text("the complete task", minLength=1),
        },
        optional={
            "label": text("a few words naming the task"),
            "tools": texts("tool names the subagent may use; default: all it may have"),
        },
    )

    # The subagent's task is its user message: marked when a stranger may have written it.
    remembers = ("task",)

    def __init__(self, control: SubagentControl) -> None:
        self._control = control

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        task = args["task"].strip()
        if not task:
            return ToolResult.error("the task is empty; describe what the subagent should do")
        label = " ".join(str(args.get("label") or task).split())[:MAX_LABEL]
        tools = args.get("tools")
        request = SpawnRequest(
            task=task,
            label=label,
            tools=tuple(dict.fromkeys(tools)) if tools is not None else None,
            parent_session=ctx.session_id,
            channel=ctx.channel,
            chat_id=ctx.chat_id,
        )
        try:
            info = await self._control.spawn(request)
        except ValueError as exc:
            return ToolResult.error(str(exc))
        queued = " It waits for a free slot first." if info.status == "queued" else ""
        return ToolResult(
            f"Started subagent {info.id} ({info.label}).{queued} Its report will arrive in this "
            "chat as a new message when it is done; do not wait for it or check on it in a loop."
        )


class SubagentsTool(Tool):
    name = "subagents"
    description = (
        "Follow the subagents you spawned: action=list shows this chat's subagents with their "
        "ids and states; status shows one (with its result once it ended); cancel stops one."
    )
    parameters = params(
        required={
            "action": choice("list", "status", "cancel"),
        },
        optional={
            "id": text("the subagent, for status and cancel"),
        },
    )

    def __init__(self, control: SubagentControl) -> None:
        self._control = control

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        action = args["action"]
        if action == "list":
            children = await self._control.children(ctx.session_id)
            if not children:
                return ToolResult("No subagents in this chat.")
            return ToolResult("Subagents:\n" + "\n".join(info.line() for info in children))
        subagent_id = str(args.get("id") or "").strip()
        if not subagent_id:
            return ToolResult.error(f"{action} needs id (see action=list)")
        if action == "cancel":
            if await self._control.cancel(subagent_id):
                return ToolResult(f"Cancelling subagent {subagent_id}; its report will follow.")
            info = await self._control.info(subagent_id)
            if info is None:
                return _unknown(subagent_id)
            return ToolResult(f"Subagent {subagent_id} already ended ({info.status}).")
        info = await self._control.info(subagent_id)
        if info is None:
            return _unknown(subagent_id)
        text = info.line()
        if info.result:
            text += f"\nResult:\n{info.result[:RESULT_PREVIEW]}"
        return ToolResult(text)


def _unknown(subagent_id: str) -> ToolResult:
    return ToolResult.error(f"there is no subagent {subagent_id!r}; use action=list to see them")
