"""What a request may spend of the model's window, and what each part of it costs.

Each history entry is counted once, when it is committed, and the count travels with its stored
record; the system prompt and tool schemas are counted once per change. So the estimate of a
request is a sum of stored numbers, however long the session grows. Counts use the model's
tokenizer through litellm's bundled files (`llm.token_counter`, offline); without them a
deliberately high estimate (a token per three characters) stands in.

The tokenizer costs ~40 MB and a tenth of a second to load, more than a one-shot
`countbot chat -m` needs in all. So it is loaded only when exactness matters: until then an
entry stays uncounted (`tokens == 0`) and a request is checked against an upper bound (every
token is at least one UTF-8 byte, `bound`); only a request whose bound does not fit its budget
loads the tokenizer (`exactly`), and from then on entries are counted as they are committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from countbot.agent.context.memo import IdentityMemo
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
from countbot.llm.token_counter import TokenizerUnavailable, count_text, encoding, encoding_name
from countbot.llm.token_counter import is_loaded as tokenizer_loaded
from countbot.llm.types import ToolSpec

# Framing a message costs on the wire beyond its text (role, separators, ids and names).
MESSAGE_OVERHEAD = 6
TOOL_RESULT_OVERHEAD = 12
TOOL_CALL_OVERHEAD = 8
Counter = Callable[[str], int]
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


def bound(text: str) -> int:
    """An upper bound of the tokens in `text` for any byte-level BPE tokenizer: its bytes."""
    return len(text.encode("utf-8", "surrogatepass"))


def entry_tokens(entry: HistoryEntry, model: str, measure: Counter | None = None) -> int:
    """What `entry` costs in a request (notes cost nothing: they are never sent); `measure`
    counts a text (default: the model's tokenizer)."""
    size = measure or (lambda text: count(text, model))
    if isinstance(entry, UserEntry):
        text = f"{entry.context}\n\n{entry.content}" if entry.context else entry.content
        return size(text) + len(entry.images) * IMAGE_TOKENS + MESSAGE_OVERHEAD
    if isinstance(entry, AssistantEntry):
        calls = sum(size(c.name + c.arguments_raw) + TOOL_CALL_OVERHEAD for c in entry.tool_calls)
        return size(entry.text) + calls + MESSAGE_OVERHEAD
    if isinstance(entry, ToolResultEntry):
        return size(entry.content) + TOOL_RESULT_OVERHEAD
    if isinstance(entry, SummaryEntry):
        return size(f"{SUMMARY_HEADING}\n{entry.text}") + MESSAGE_OVERHEAD
    return 0


async def counted(entry: HistoryEntry, model: str) -> HistoryEntry:
    """`entry` with its token count filled in if the tokenizer is loaded, else as it is (to be
    bounded or counted when a request needs it)."""
    if not tokenizer_loaded(model):
        return entry
    return await _counted_now(entry, model)


async def _counted_now(entry: HistoryEntry, model: str) -> HistoryEntry:
    """`entry` with its token count filled in (long texts are counted off the event loop)."""
    if isinstance(entry, NoteEntry) or entry.tokens:
        return entry
    if text_size(entry) > INLINE_COUNT_CHARS:
        tokens = await asyncio.to_thread(entry_tokens, entry, model)
    else:
        tokens = entry_tokens(entry, model)
    return dataclasses.replace(entry, tokens=tokens)


def bounded(
    entries: Sequence[HistoryEntry], memo: IdentityMemo[HistoryEntry] | None = None
) -> list[HistoryEntry]:
    """`entries` with an upper bound standing in for each count not made yet; `memo` keeps the
    bounded copies, so a history bounded before every request is bounded once per entry."""
    shown = []
    for entry in entries:
        if entry.tokens or isinstance(entry, NoteEntry):
            shown.append(entry)
            continue
        copy = memo.get(entry) if memo is not None else None
        if copy is None:
            copy = dataclasses.replace(entry, tokens=entry_tokens(entry, "", bound))
            if memo is not None:
                memo.put(entry, copy, text_size(entry))
        shown.append(copy)
    return shown


async def exactly(entries: Sequence[HistoryEntry], model: str) -> list[HistoryEntry]:
    """`entries` with every count made by the tokenizer (loaded now if it was not)."""
    if not tokenizer_loaded(model):
        with contextlib.suppress(TokenizerUnavailable):
            await asyncio.to_thread(encoding, encoding_name(model))
    return [await _counted_now(e, model) for e in entries]


def text_size(entry: HistoryEntry) -> int:
    """Characters of text in `entry` (what counting it costs)."""
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


def schema_estimate(tool: ToolSpec, model: str) -> int:
    """What one tool's schema costs: counted once the tokenizer is loaded, else a high estimate
    (a token per three characters), so choosing tools never loads the tokenizer."""
    if tokenizer_loaded(model):
        return schema_tokens((tool,), model)
    return len(json.dumps(to_openai_tools([tool]), ensure_ascii=False)) // 3 + 1


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
    """The system prompt's and tool schemas' token count (an upper bound until the tokenizer is
    loaded), recounted only when one of them changes."""

    _key: tuple[str, int, str, bool] | None = None
    _tokens: int = 0

    def tokens(self, system_prompt: str, tools: Sequence[ToolSpec], model: str) -> int:
        exact = tokenizer_loaded(model)
        key = (system_prompt, hash(tuple(t.name for t in tools)), model, exact)
        if key != self._key:
            size = (lambda text: count(text, model)) if exact else bound
            schemas = json.dumps(to_openai_tools(list(tools)), ensure_ascii=False)
            self._tokens = size(system_prompt) + MESSAGE_OVERHEAD + size(schemas)
            self._key = key
        return self._tokens
