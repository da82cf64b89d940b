"""Fitting a session's history into a request's token budget, without changing what is stored.

Levels of detail, applied only as far as needed (each keeps tool calls paired with results):

1. always: a file read again with the same content as an earlier copy still in full in the
   request is answered "unchanged since the earlier read" (that earlier copy stays whole); a
   changed one says so; a long tool result of a finished exchange keeps its head and tail and
   says how to read the rest (`read_result`): it is shortened once, when its exchange is over,
   and stays so, so the prefix a prompt cache holds changes once per exchange at most;
2. tool results of older exchanges become a gist (tool, arguments, status, size, first lines)
   with a pointer: `read_result` with the call's `tool_call_id` reads the stored result again;
3. the same for every exchange before the current one, then for the current one's results too;
4. a single entry that alone does not fit (a pasted book, a huge result) is cut to the head that
   fits, with the same pointer;
5. whole exchanges are dropped from the front; `overflow` tells the caller, which summarizes
   them into MEMORY.md (phase 2) at the start of the next turn.

Gists are decided per exchange, so the request prefix before the moving boundary stays
byte-stable from one call to the next (prompt caches keep hitting).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from countbot.agent.context.memo import IdentityMemo
from countbot.agent.context.tokens import (
    MESSAGE_OVERHEAD,
    TOOL_RESULT_OVERHEAD,
    Counter,
    estimate_tokens,
    text_size,
)
from countbot.agent.history import (
    AssistantEntry,
    HistoryEntry,
    SummaryEntry,
    ToolResultEntry,
    UserEntry,
    project,
    project_one,
)
from countbot.llm.types import Message, ToolCall

# Tools whose result is a file's content, keyed by their `path` argument.
FILE_READ_TOOLS = frozenset({"read_file"})
RECENT_EXCHANGES = 2
GIST_LINES = 3
GIST_LINE_CHARS = 160
ARGUMENT_CHARS = 160

# An entry's own message (None for a note): `history.project_one`, remembered or not.
Projector = Callable[[HistoryEntry], "Message | None"]


@dataclass(frozen=True, slots=True)
class Fitted:
    """A request's history as sent, and what fitting it took."""

    messages: list[Message]
    tokens: int  # the estimate, fixed cost included
    gisted: int  # tool results shown as a gist
    overflow: bool  # exchanges had to be left out: summarize them (phase 2)
    # Estimated tokens of the auto-recall blocks the kept user entries carry (shown apart in
    # usage: what recall costs).
    recall_tokens: int = 0


def fit(
    entries: Sequence[HistoryEntry],
    *,
    budget: int,
    fixed: int,
    count: Counter,
    vision: bool,
    made: IdentityMemo[Message] | None = None,
) -> Fitted:
    """The least reduced projection of `entries` (each with its `tokens`) within `budget`;
    `made` keeps each entry's message (for this `vision`) between requests."""
    calls = _calls_by_id(entries)  # the same after rereads are deduped (only results change)
    shown, referred = _dedupe_rereads(list(entries), calls, count)
    starts = [i for i, e in enumerate(shown) if isinstance(e, UserEntry)] or [0]
    shown = _shrink_finished(shown, starts[-1], referred, count)
    # The boundaries before which results become gists: older exchanges, all but the current
    # one, then everything.
    levels = [0, starts[max(len(starts) - RECENT_EXCHANGES, 0)], starts[-1], len(shown)]
    for boundary in levels:
        candidate = _gist_results_before(shown, boundary, calls, count) if boundary else shown
        total = fixed + _sum(candidate)
        if total <= budget:
            return _done(candidate, total, boundary, _projector(vision, made), overflow=False)
    candidate = _cut_oversized(candidate, budget - fixed, calls, count)
    overflow = False
    while fixed + _sum(candidate) > budget and _droppable(candidate):
        candidate = _drop_first_exchange(candidate)
        overflow = True
    projector = _projector(vision, made)
    return _done(candidate, fixed + _sum(candidate), len(candidate), projector, overflow=overflow)


def gist_cost(entry: HistoryEntry) -> int:
    """Roughly what `entry` costs once older results are gists (for choosing what to keep)."""
    if isinstance(entry, ToolResultEntry):
        return min(entry.tokens, 120)
    return entry.tokens


def _done(
    entries: list[HistoryEntry], total: int, boundary: int, one: Projector, *, overflow: bool
) -> Fitted:
    gisted = sum(
        1 for e in entries[:boundary] if isinstance(e, ToolResultEntry) and _is_gist(e.content)
    )
    recall = sum(
        estimate_tokens(part.for_model())
        for e in entries
        if isinstance(e, UserEntry)
        for part in e.parts
        if part.kind == "recall"
    )
    return Fitted(project(entries, one=one), total, gisted, overflow, recall)


def _projector(vision: bool, made: IdentityMemo[Message] | None) -> Projector:
    """An entry's message, taken from `made` when this very entry was projected before (a
    message of frozen dataclasses is costly to make again for every request: docs/agent_turn.md)."""
    if made is None:
        return functools.partial(project_one, vision=vision)

    def one(entry: HistoryEntry) -> Message | None:
        message = made.get(entry)
        if message is None:
            message = project_one(entry, vision=vision)
            if message is not None:  # a note has none
                made.put(entry, message, text_size(entry))
        return message

    return one


def _sum(entries: Sequence[HistoryEntry]) -> int:
    return sum(e.tokens for e in entries)


def _calls_by_id(entries: Sequence[HistoryEntry]) -> dict[str, ToolCall]:
    return {
        call.id: call for e in entries if isinstance(e, AssistantEntry) for call in e.tool_calls
    }


def _dedupe_rereads(
    entries: list[HistoryEntry], calls: dict[str, ToolCall], count: Counter
) -> tuple[list[HistoryEntry], set[str]]:
    """`entries` with unchanged re-reads pointing at the earlier read, and the tool call ids of
    the earlier reads pointed at (kept whole)."""
    referred: set[str] = set()
    if not any(call.name in FILE_READ_TOOLS for call in calls.values()):
        return entries, referred  # no file was read: nothing to dedupe (most requests)
    seen: dict[str, tuple[str, str]] = {}  # path -> (content hash, tool_call_id)
    shown: list[HistoryEntry] = []
    for entry in entries:
        path = _read_path(entry, calls)
        if path is None or not isinstance(entry, ToolResultEntry):
            shown.append(entry)
            continue
        digest = hashlib.sha256(entry.content.encode("utf-8", "replace")).hexdigest()
        earlier = seen.get(path)
        seen[path] = (digest, entry.tool_call_id)
        if earlier is None:
            shown.append(entry)
        elif earlier[0] == digest:
            referred.add(earlier[1])
            seen[path] = earlier  # a later re-read points at the copy that is whole
            note = (
                f"[{path} is unchanged since the earlier read (tool call {earlier[1]}); "
                "its content is above.]"
            )
            shown.append(_with_content(entry, note, count))
        else:
            note = f"[{path} changed since the earlier read (tool call {earlier[1]}).]\n"
            shown.append(_with_content(entry, note + entry.content, count, extra=True))
    return shown, referred


# A tool result of a finished exchange longer than this (characters) keeps only its head and
# tail; a read file's start and end usually say what it is, and `read_result` brings it back.
SHRINK_OVER = 3_000
HEAD_CHARS = 1_600
TAIL_CHARS = 600


def _shrink_finished(
    entries: list[HistoryEntry], current: int, referred: set[str], count: Counter
) -> list[HistoryEntry]:
    """Long results before the current exchange (index `current`), head and tail only, except
    those a later re-read points at."""
    return [
        _shrunk(e, count)
        if i < current
        and isinstance(e, ToolResultEntry)
        and len(e.content) > SHRINK_OVER
        and e.tool_call_id not in referred
        and not _is_gist(e.content)
        else e
        for i, e in enumerate(entries)
    ]


def _shrunk(entry: ToolResultEntry, count: Counter) -> ToolResultEntry:
    """`entry`'s head and tail and how to read the rest: made from the entry alone, so every
    request shows it the same bytes."""
    content = entry.content
    left_out = len(content) - HEAD_CHARS - TAIL_CHARS
    middle = (
        f"\n[… {left_out:,} characters of this result left out (the turn that needed them is "
        f'over); to read it whole, call read_result with tool_call_id="{entry.tool_call_id}". '
        "…]\n"
    )
    return _with_content(entry, content[:HEAD_CHARS] + middle + content[-TAIL_CHARS:], count)


def _read_path(entry: HistoryEntry, calls: dict[str, ToolCall]) -> str | None:
    if not isinstance(entry, ToolResultEntry) or entry.status != "ok":
        return None
    call = calls.get(entry.tool_call_id)
    if call is None or call.name not in FILE_READ_TOOLS:
        return None
    path = _arguments(call).get("path")
    return path if isinstance(path, str) else None


def _arguments(call: ToolCall) -> dict:
    if call.arguments is not None:
        return call.arguments
    try:
        parsed = json.loads(call.arguments_raw or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _with_content(
    entry: ToolResultEntry, content: str, count: Counter, *, extra: bool = False
) -> ToolResultEntry:
    """`entry` showing `content`; `extra` adds a short note's cost to the known count."""
    if extra:
        tokens = entry.tokens + count(content[: len(content) - len(entry.content)])
    else:
        tokens = count(content) + TOOL_RESULT_OVERHEAD
    return dataclasses.replace(entry, content=content, tokens=tokens)


_GIST_MARK = "[Earlier result of "


def _is_gist(content: str) -> bool:
    return content.startswith(_GIST_MARK)


def _gist_results_before(
    entries: list[HistoryEntry], boundary: int, calls: dict[str, ToolCall], count: Counter
) -> list[HistoryEntry]:
    return [
        _gist(e, calls, count)
        if i < boundary and isinstance(e, ToolResultEntry) and e.tokens > _GIST_WORTH
        else e
        for i, e in enumerate(entries)
    ]


# A result this small is cheaper to keep than to point at.
_GIST_WORTH = 80


def _gist(
    entry: ToolResultEntry,
    calls: dict[str, ToolCall],
    count: Counter,
    head_chars: int | None = None,
) -> ToolResultEntry:
    call = calls.get(entry.tool_call_id)
    arguments = call.arguments_raw if call is not None else ""
    if len(arguments) > ARGUMENT_CHARS:
        arguments = arguments[:ARGUMENT_CHARS] + "…"
    if head_chars is None:
        lines = [line[:GIST_LINE_CHARS] for line in entry.content.splitlines()[:GIST_LINES]]
        head = "\n".join(lines)
    else:
        head = entry.content[:head_chars]
    content = (
        f"{_GIST_MARK}{entry.name}({arguments}): {entry.status}, "
        f"{len(entry.content):,} characters (~{entry.tokens:,} tokens). It begins:\n{head}\n"
        f'[To read it whole, call read_result with tool_call_id="{entry.tool_call_id}".]'
    )
    return _with_content(entry, content, count)


def _cut_limit(room: int) -> int:
    return max(room // 2, 64)


def _oversized(entry: HistoryEntry, limit: int) -> bool:
    return entry.tokens > limit and isinstance(entry, ToolResultEntry | UserEntry)


def _cut_oversized(
    entries: list[HistoryEntry], room: int, calls: dict[str, ToolCall], count: Counter
) -> list[HistoryEntry]:
    """Cut any entry that alone takes more than half the room down to a head that fits."""
    limit = _cut_limit(room)
    cut: list[HistoryEntry] = []
    for entry in entries:
        if not _oversized(entry, limit):
            cut.append(entry)
            continue
        chars = max(limit * 2, 200)
        while True:
            smaller = _head_of(entry, chars, calls, count)
            if smaller.tokens <= limit or chars <= 200:
                break
            chars //= 2
        cut.append(smaller)
    return cut


def _head_of(
    entry: ToolResultEntry | UserEntry, chars: int, calls: dict[str, ToolCall], count: Counter
) -> HistoryEntry:
    if isinstance(entry, ToolResultEntry):
        return _gist(entry, calls, count, head_chars=chars)
    content = (
        f"[The user's message was {len(entry.content):,} characters (~{entry.tokens:,} tokens), "
        f"too long to send whole; it is kept in the session. It begins:]\n{entry.content[:chars]}"
    )
    shown = dataclasses.replace(entry, content=content, images=())
    text = f"{entry.context}\n\n{content}" if entry.context else content
    return dataclasses.replace(shown, tokens=count(text) + MESSAGE_OVERHEAD)


def _droppable(entries: list[HistoryEntry]) -> bool:
    """Whether an exchange before the current one is left to drop."""
    starts = [i for i, e in enumerate(entries) if isinstance(e, UserEntry)]
    return len(starts) > 1 or (
        bool(entries) and isinstance(entries[0], SummaryEntry) and len(entries) > 1
    )


def _drop_first_exchange(entries: list[HistoryEntry]) -> list[HistoryEntry]:
    """Leave out the oldest exchange (the summary first, then user message to user message)."""
    head = [entries[0]] if isinstance(entries[0], SummaryEntry) else []
    rest = entries[len(head) :]
    starts = [i for i, e in enumerate(rest) if isinstance(e, UserEntry)]
    if len(starts) > 1:
        return head + rest[starts[1] :]
    return rest  # only the current exchange is left: the summary goes
