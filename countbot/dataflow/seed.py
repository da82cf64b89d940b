"""What a turn brought before its first tool: read from the session, USER.md and the secrets.

The policy asks for this once per turn, and only when a call would send something out, so a
turn that sends nothing never reads it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from countbot.dataflow.policy import TurnInputs
from countbot.tools.base import ToolContext

# Instruction files the system prompt carries: the user's own words about themselves.
_PROMPT_FILES = ("USER.md", "AGENTS.md")
_MAX_FILE_BYTES = 1_000_000
# Text other surfaces mark as written by someone other than the user.
_EXTERNAL = "<external"


class HistoryWindow(Protocol):
    records: list[dict[str, Any]]
    summary: str | None


class HistoryReader(Protocol):
    async def load_window(self, session_id: str, limit: int) -> HistoryWindow: ...


class SessionSeed:
    """Implements `TurnSeed` from the session's history window (as the model sees it)."""

    def __init__(
        self,
        history: HistoryReader,
        workspace: Path,
        secrets: Callable[[], Iterable[str]],
        window: Callable[[], int],
    ) -> None:
        self._history = history
        self._workspace = workspace
        self._secrets = secrets
        self._window = window

    async def __call__(self, ctx: ToolContext) -> TurnInputs:
        window = await self._history.load_window(ctx.session_id, self._window())
        records = window.records
        owner = [str(r.get("content") or "") for r in records if r.get("type") == "user"]
        private = [("a configured secret", secret) for secret in self._secrets() if secret]
        untrusted = []
        for record in records:
            context = str(record.get("context") or "") if record.get("type") == "user" else ""
            if context:
                private.append(("this conversation", context))
            if _EXTERNAL in context:
                untrusted.append(("text from others in the message", context))
        if window.summary:
            private.append(("the conversation summary", window.summary))
        for name in _PROMPT_FILES:
            text = await asyncio.to_thread(_read_small, self._workspace / name)
            if text:
                private.append((name, text))
        return TurnInputs(owner, "\n".join(_request(records)), private, untrusted)


def _request(records: list[dict[str, Any]]) -> list[str]:
    """The user's messages of the running turn: those after the last finished answer."""
    texts: list[str] = []
    for record in records:
        if record.get("type") == "assistant" and not record.get("tool_calls"):
            texts = []
        elif record.get("type") == "user":
            texts.append(str(record.get("content") or ""))
    return texts


def _read_small(path: Path) -> str:
    try:
        with path.open("rb") as file:
            return file.read(_MAX_FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
