"""What a request may spend of the model's window, and what each part of it costs.

Each history entry is counted once, when it is committed, and the count travels with its stored
record; the system prompt and tool schemas are counted once per change. So the estimate of a
request is a sum of stored numbers, however long the session grows. Counts use the model's
tokenizer through litellm's bundled files (`llm.token_counter`, offline); without them a
deliberately high estimate (a token per three characters) stands in.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass

from countbot.agent.history import (
    SUMMARY_HEADING,
    AssistantEntry,
    HistoryEntry,
    NoteEntry,
    SummaryEntry,
    ToolResultEntry,
    UserEntry,
)
from countbot.llm.openai_format import to_openai_tools
from countbot.llm.token_counter import TokenizerUnavailable, count_text
from countbot.llm.types import ToolSpec

# Framing a message costs on the wire beyond its text (role, separators, ids and names).
MESSAGE_OVERHEAD = 6
TOOL_RESULT_OVERHEAD = 12
TOOL_CALL_OVERHEAD = 8
# Vendors resize images before counting them; this is a typical high-detail tile count.
IMAGE_TOKENS = 800
# Texts longer than this are counted in a worker thread, not on the event loop.
INLINE_COUNT_CHARS = 4000
# A budget never shrinks below this share of the window, however large `max_tokens` is set.
MIN_BUDGET_SHARE = 0.4


def count(text: str, model: str) -> int:
    """Tokens in `text` for `model`; without the tokenizer files, a high estimate."""
    if not text:
        return 0
    try:
        return count_text(text, model)
    except TokenizerUnavailable:
        return len(text) // 3 + 1


def entry_tokens(entry: HistoryEntry, model: str) -> int:
    """What `entry` costs in a request (notes cost nothing: they are never sent)."""
    if isinstance(entry, UserEntry):
        text = f"{entry.context}\n\n{entry.content}" if entry.context else entry.content
        return count(text, model) + len(entry.images) * IMAGE_TOKENS + MESSAGE_OVERHEAD
    if isinstance(entry, AssistantEntry):
        calls = sum(
            count(c.name + c.arguments_raw, model) + TOOL_CALL_OVERHEAD for c in entry.tool_calls
        )
        return count(entry.text, model) + calls + MESSAGE_OVERHEAD
    if isinstance(entry, ToolResultEntry):
        return count(entry.content, model) + TOOL_RESULT_OVERHEAD
    if isinstance(entry, SummaryEntry):
        return count(f"{SUMMARY_HEADING}\n{entry.text}", model) + MESSAGE_OVERHEAD
    return 0


async def counted(entry: HistoryEntry, model: str) -> HistoryEntry:
    """`entry` with its token count filled in (long texts are counted off the event loop)."""
    if isinstance(entry, NoteEntry) or entry.tokens:
        return entry
    if _text_size(entry) > INLINE_COUNT_CHARS:
        tokens = await asyncio.to_thread(entry_tokens, entry, model)
    else:
        tokens = entry_tokens(entry, model)
    return dataclasses.replace(entry, tokens=tokens)


def _text_size(entry: HistoryEntry) -> int:
    if isinstance(entry, UserEntry):
        return len(entry.content) + len(entry.context)
    if isinstance(entry, AssistantEntry):
        return len(entry.text) + sum(len(c.arguments_raw) for c in entry.tool_calls)
    if isinstance(entry, ToolResultEntry):
        return len(entry.content)
    return len(entry.text)


def schema_tokens(tools: Sequence[ToolSpec], model: str) -> int:
    """What the tool schemas cost in a request (their JSON, as sent)."""
    return count(json.dumps(to_openai_tools(list(tools)), ensure_ascii=False), model)


def request_budget(context_window: int, share: float, max_tokens: int | None) -> int:
    """Prompt tokens a request may use: `share` of the window, less the room for the answer.

    The answer's room is capped so a large `max_tokens` on a small model still leaves a usable
    prompt (the provider then shortens the answer, not the conversation).
    """
    usable = int(context_window * share)
    reserve = min(max_tokens or 0, int(usable * (1 - MIN_BUDGET_SHARE)))
    return usable - reserve


@dataclass(slots=True)
class FixedCost:
    """The system prompt's and tool schemas' token count, recounted only when one changes."""

    _key: tuple[str, int, str] | None = None
    _tokens: int = 0

    def tokens(self, system_prompt: str, tools: Sequence[ToolSpec], model: str) -> int:
        key = (system_prompt, hash(tuple(t.name for t in tools)), model)
        if key != self._key:
            self._tokens = (
                count(system_prompt, model) + MESSAGE_OVERHEAD + schema_tokens(tools, model)
            )
            self._key = key
        return self._tokens
