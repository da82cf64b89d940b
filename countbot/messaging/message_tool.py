"""The `message` tool: the agent sends text or a workspace file to a chat on a channel.

By default it answers into the chat the turn came from. Another chat must be one the owner
has (allowed, paired, or one the assistant talks in), never an arbitrary chat id: a model steered
by a stranger's text cannot message the stranger. What it reports is what the platform answered,
so the model never tells the user something arrived that did not.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from countbot.tools.base import Egress, Tool, ToolContext, ToolResult
from countbot.tools.schema import params, text, texts
from countbot.tools.workspace_guard import PathRefused, WorkspaceGuard

MAX_FILES = 10
NOT_OWNED = "not one of the owner's chats (not on the allow-list, not paired, never talked in)"
ANOTHER_AGENTS = (
    "bound to another agent: this assistant may message only the chats bound to it (the owner "
    "can allow a chat in agents.others.<name>.may_message)"
)


class DeliveryReport(Protocol):
    delivered: bool
    detail: str
    message_ids: tuple[str, ...]


class Deliverer(Protocol):
    """Whatever delivers to chats (the runtime adapts its delivery router to this)."""

    async def deliver(
        self, channel: str, chat_id: str, text: str, files: Sequence[Path]
    ) -> DeliveryReport: ...

    def channels(self) -> list[str]: ...

    async def knows(self, channel: str, chat_id: str) -> bool:
        """Whether the owner has this chat: on the channel's allow-list, paired, or talked in."""
        ...

    def reaches(self, channel: str, chat_id: str) -> bool:
        """Whether the chat is this agent's: bound to it, or allowed to it by the owner."""
        ...


class MessageTool(Tool):
    name = "message"
    description = (
        "Send a message to a chat on a chat channel (e.g. Telegram): text, workspace files, or "
        "both. Without channel and chat_id it goes to the chat this conversation is in. Use it "
        "to send files, or to message another chat; your normal answer already reaches the user."
    )
    parameters = params(
        optional={
            "text": text("the message text (Markdown)"),
            "files": texts("paths of workspace files to send", maxItems=MAX_FILES),
            "channel": text("e.g. telegram; default: this chat's"),
            "chat_id": text("the chat to send to; default: this one"),
        },
    )

    def __init__(self, deliverer: Deliverer, guard: WorkspaceGuard) -> None:
        self._deliverer = deliverer
        self._guard = guard

    async def egress(self, args: dict[str, Any], ctx: ToolContext) -> Egress | None:
        """The chat and the text; a chat the call will refuse is marked so (nothing leaves)."""
        channel, chat_id = _target(args, ctx)
        if not channel or not chat_id:
            return None
        text = str(args.get("text") or "")
        refused = await self._refusal(channel, chat_id, ctx)
        return Egress("chat", f"{channel}:{chat_id}", text, bool(args.get("files")), refused)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        text = str(args.get("text") or "")
        names = [str(name) for name in args.get("files") or ()]
        if not text.strip() and not names:
            return ToolResult.error("give a text, files, or both")
        channel, chat_id = _target(args, ctx)
        if not channel or not chat_id:
            running = ", ".join(self._deliverer.channels()) or "none"
            return ToolResult.error(
                f"this conversation is not in a chat: name a channel (running: {running}) "
                "and a chat_id"
            )
        refused = await self._refusal(channel, chat_id, ctx)
        if refused == ANOTHER_AGENTS:
            return ToolResult.error(f"{channel}:{chat_id} is {ANOTHER_AGENTS}.")
        if refused is not None:
            return ToolResult.error(
                f"{channel}:{chat_id} is {NOT_OWNED}; messages go only to those. The owner can "
                "allow it in the channel settings."
            )
        folder = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="countbot-send-"))
        try:
            try:
                files = await asyncio.to_thread(self._snapshot, names, folder)
            except PathRefused as exc:
                return ToolResult.error(exc.reason)
            report = await self._deliverer.deliver(channel, str(chat_id), text, files)
        finally:
            await asyncio.to_thread(shutil.rmtree, folder, True)
        where = f"{channel}:{chat_id}"
        if not report.delivered:
            return ToolResult.error(f"not delivered to {where}: {report.detail}")
        ids = ", ".join(report.message_ids)
        return ToolResult(f"Delivered to {where}" + (f" (message ids {ids})." if ids else "."))

    async def _refusal(self, channel: str, chat_id: str, ctx: ToolContext) -> str | None:
        """Why the call may not reach the chat (None: it may)."""
        if channel == ctx.channel and chat_id == ctx.chat_id:
            return None
        if not self._deliverer.reaches(channel, chat_id):
            return ANOTHER_AGENTS
        return None if await self._deliverer.knows(channel, chat_id) else NOT_OWNED

    def _snapshot(self, names: list[str], folder: Path) -> list[Path]:
        """Private copies of the files, read through the guard's descriptors: what is sent is
        what was checked, even if a name is swapped for a symlink while the upload runs."""
        files = []
        for index, name in enumerate(names):
            try:
                with self._guard.open_regular(name) as (source, real):
                    copy = folder / str(index) / real.name
                    copy.parent.mkdir()
                    with copy.open("wb") as target:
                        shutil.copyfileobj(source, target)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                raise PathRefused(f"{name!r} is not a file in the workspace") from None
            except OSError as exc:
                raise PathRefused(f"{name!r}: {exc.strerror or exc}") from None
            files.append(copy)
        return files


def _target(args: dict[str, Any], ctx: ToolContext) -> tuple[str | None, str | None]:
    """The chat a call sends to: its channel and chat_id, defaulting to the turn's own chat."""
    channel = args.get("channel") or ctx.channel
    chat_id = args.get("chat_id") or (ctx.chat_id if channel == ctx.channel else None)
    return channel, str(chat_id) if chat_id else None
