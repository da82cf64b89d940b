"""What a turn brought before its first tool: read from the session, USER.md and the secrets.

The policy asks for this once per turn, and only when a call would send something out, so a
turn that sends nothing never reads it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from countbot.agent.ports import HistoryWindow
from countbot.common.authorship import Messages, Said
from countbot.dataflow.policy import EarlierResult, TurnInputs
from countbot.tools.base import ToolContext

# Instruction files the system prompt carries: the user's own words about themselves.
_PROMPT_FILES = ("USER.md", "AGENTS.md")
_MAX_FILE_BYTES = 1_000_000


class HistoryReader(Protocol):
    async def load_window(self, session_id: str, limit: int) -> HistoryWindow: ...


@dataclass(frozen=True, slots=True)
class SessionSeed:
    """Implements `TurnSeed` from the session's history window (as the model sees it)."""

    history: HistoryReader
    workspace: Path
    secrets: Callable[[], Iterable[str]]
    window: Callable[[], int]

    async def __call__(self, ctx: ToolContext, *, secrets: bool = True) -> TurnInputs:
        window = await self.history.load_window(ctx.session_id, self.window())
        messages = Messages()
        messages.add_all(Said.of_record(r) for r in window.records if r.get("type") == "user")
        configured = self.secrets() if secrets else ()
        private = [("a configured secret", secret) for secret in configured if secret]
        private.extend(messages.private)
        if window.summary:
            private.append(("the conversation summary", window.summary))
        files = await asyncio.to_thread(_read_prompt_files, self.workspace)
        private.extend((name, text) for name, text in files if text)
        request = "\n".join(_request(window.records))
        results = _results(window.records)
        return TurnInputs(messages.owner, request, private, messages.untrusted, results)


def _request(records: list[dict[str, Any]]) -> list[str]:
    """The user's own messages of the running turn: those after the last finished answer."""
    texts: list[str] = []
    for record in records:
        if record.get("type") == "assistant" and not record.get("tool_calls"):
            texts = []
        elif record.get("type") == "user" and (said := Said.of_record(record)).author.owned:
            texts.append(said.content)
    return texts


def _results(records: list[dict[str, Any]]) -> list[EarlierResult]:
    """The tool results of earlier turns in the window, each with its call's arguments (this
    turn's own reach the policy as they arrive)."""
    finished = [
        i for i, r in enumerate(records) if r.get("type") == "assistant" and not r.get("tool_calls")
    ]
    return paired_results(records[: finished[-1]] if finished else [])


def paired_results(records: list[dict[str, Any]]) -> list[EarlierResult]:
    """The tool results among `records`, each with its call's arguments."""
    calls = {
        call.get("id"): call
        for record in records
        if record.get("type") == "assistant"
        for call in record.get("tool_calls") or ()
    }
    results = []
    for record in records:
        if record.get("type") != "tool_result":
            continue
        call = calls.get(record.get("tool_call_id"))
        if call is not None:
            arguments = _arguments(str(call.get("arguments_raw") or "{}"))
            untrusted = tuple(str(source) for source in record.get("untrusted") or ())
            name, content = str(record.get("name")), record["content"]
            results.append(EarlierResult(name, arguments, content, untrusted))
    return results


def _arguments(raw: str) -> dict[str, Any]:
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _read_prompt_files(workspace: Path) -> list[tuple[str, str]]:
    """Each instruction file's name and text, read in one hand-off."""
    return [(name, _read_small(workspace / name)) for name in _PROMPT_FILES]


def _read_small(path: Path) -> str:
    try:
        with path.open("rb") as file:
            return file.read(_MAX_FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
