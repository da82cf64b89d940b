"""What a request may spend of the model's window, and what each part of it costs.

A request is first checked against what is known: for each history entry its count if the
tokenizer made one, else an upper bound (every token is at least one UTF-8 byte, `bound`), and
the same for the system prompt and tool schemas (`FixedCost`). Only a request whose estimate
does not fit its budget (or that a spending limit would stop by it) is counted: every text not
counted yet goes to the tokenizer in one batch (`TokenCounting`, in the daemon a child process:
loading the tokenizer would hold the event loop's GIL), and each count is remembered for its
entry, so a warm turn whose estimate fits waits for nothing. When the tokenizer cannot answer,
the upper bounds stand in: a request may then be cut more than it had to, never past its budget.
"""

from __future__ import annotations

import dataclasses
import json
import operator
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

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
from countbot.llm.token_counter import encoding_name
from countbot.llm.types import ToolSpec

# Framing a message costs on the wire beyond its text (role, separators, ids and names).
MESSAGE_OVERHEAD = 6
TOOL_RESULT_OVERHEAD = 12
TOOL_CALL_OVERHEAD = 8
Counter = Callable[[str], int]
# Vendors resize images before counting them; this is a typical high-detail tile count.
IMAGE_TOKENS = 800
# A budget never shrinks below this share of the window, however large `max_tokens` is set.
MIN_BUDGET_SHARE = 0.4
# Characters of the texts fitting made (gists, notes, heads) whose counts are remembered.
MADE_TEXT_CHARS = 500_000
# A request whose history (by its upper bound) fills more than this share of the room its budget
# leaves beside the system prompt and the tools has the tokenizer made ready in the background
# (`Counts.prepare`): a later, longer one will need exact counts. Not a share of the whole budget:
# the tool schemas' upper bound alone is over half of a 32k window's (3.7 bytes a token).
PREPARE_SHARE = 0.5


class TokenCounting(Protocol):
    """The model's tokenizer, asked in batches (in the daemon: `llm.token_process`)."""

    async def count(self, texts: Sequence[str], model: str) -> list[int] | None:
        """Tokens in each of `texts` for `model`; None when the tokenizer cannot say."""
        ...

    def prepare(self, model: str) -> None:
        """Make the tokenizer for `model` ready in the background, without waiting: counts
        will soon be asked (in the daemon: the child is started and loads the encoding)."""
        ...


def bound(text: str) -> int:
    """An upper bound of the tokens in `text` for any byte-level BPE tokenizer: its bytes."""
    return len(text.encode("utf-8", "surrogatepass"))


def estimate_tokens(text: str) -> int:
    """A model-agnostic estimate for figures shown, not for fitting: a Latin token is about four
    characters, every other character about one token."""
    wide = sum(1 for char in text if not char.isascii())
    return wide + (len(text) - wide + 3) // 4


def entry_tokens(entry: HistoryEntry, measure: Counter) -> int:
    """What `entry` costs in a request, `measure` counting each text (notes cost nothing: they
    are never sent)."""
    if isinstance(entry, UserEntry):
        text = f"{entry.context}\n\n{entry.content}" if entry.context else entry.content
        return measure(text) + len(entry.images) * IMAGE_TOKENS + MESSAGE_OVERHEAD
    if isinstance(entry, AssistantEntry):
        calls = sum(
            measure(c.name + c.arguments_raw) + TOOL_CALL_OVERHEAD for c in entry.tool_calls
        )
        return measure(entry.text) + calls + MESSAGE_OVERHEAD
    if isinstance(entry, ToolResultEntry):
        return measure(entry.content) + TOOL_RESULT_OVERHEAD
    if isinstance(entry, SummaryEntry):
        return measure(f"{SUMMARY_HEADING}\n{entry.text}") + MESSAGE_OVERHEAD
    return 0


def bounded(
    entries: Sequence[HistoryEntry], memo: IdentityMemo[HistoryEntry] | None = None
) -> list[HistoryEntry]:
    """`entries` with an upper bound standing in for each count not made yet; `memo` keeps the
    bounded copies, so a history bounded before every request is bounded once per entry."""
    return [_bounded(entry, memo) for entry in entries]


def _bounded(entry: HistoryEntry, memo: IdentityMemo[HistoryEntry] | None) -> HistoryEntry:
    if entry.tokens or isinstance(entry, NoteEntry):
        return entry
    copy = memo.get(entry) if memo is not None else None
    if copy is None:
        copy = dataclasses.replace(entry, tokens=entry_tokens(entry, bound))
        if memo is not None:
            memo.put(entry, copy, text_size(entry))
    return copy


def text_size(entry: HistoryEntry) -> int:
    """Characters of text in `entry` (what counting it costs)."""
    if isinstance(entry, UserEntry):
        return len(entry.content) + len(entry.context)
    if isinstance(entry, AssistantEntry):
        return len(entry.text) + sum(len(c.arguments_raw) for c in entry.tool_calls)
    if isinstance(entry, ToolResultEntry):
        return len(entry.content)
    return len(entry.text)


# Characters per token of a tool's JSON schema (ASCII); both encodings give 3.7-3.8 over the core
# tools and a test MCP server's, so 3.6 estimates a few percent high.
_SCHEMA_CHARS_PER_TOKEN = 3.6


def schema_estimate(tool: ToolSpec) -> int:
    """What one tool's schema costs, estimated a little high: choosing tools never waits for the
    tokenizer, and the same message chooses the same tools. Only the choice against
    `agent.tool_budget` uses it (the request's fit counts the schemas it sends); a token per
    three characters made a 9-tool MCP server that fits the default budget (3,614 tokens counted)
    look 4,582 and dropped its tools. A non-ASCII character counts about a token."""
    text = json.dumps(to_openai_tools([tool]), ensure_ascii=False)
    wide = len(text.encode()) - len(text)  # 1-3 extra bytes per non-ASCII character
    return int(len(text) / _SCHEMA_CHARS_PER_TOKEN + wide / 2) + 1


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
    """The system prompt's and tool schemas' tokens: an upper bound until counted for an
    encoding, made again only when one of them changes."""

    _key: tuple[str, int] | None = None
    _texts: tuple[str, str] = ("", "")
    _bound: int = 0
    _exact: dict[str, int] = field(default_factory=dict)  # by encoding

    def tokens(self, system_prompt: str, tools: Sequence[ToolSpec], encoding: str) -> int:
        key = (system_prompt, hash(tuple(t.name for t in tools)))
        if key != self._key:
            schemas = json.dumps(to_openai_tools(list(tools)), ensure_ascii=False)
            self._key, self._texts = key, (system_prompt, schemas)
            self._bound = bound(system_prompt) + MESSAGE_OVERHEAD + bound(schemas)
            self._exact = {}
        return self._exact.get(encoding, self._bound)

    def uncounted(self, encoding: str) -> tuple[str, ...]:
        """The texts to count for `encoding` (none once counted)."""
        return () if encoding in self._exact else self._texts

    def learn(self, texts: tuple[str, ...], encoding: str, counts: dict[str, int]) -> None:
        """Take the counts of `texts` (from `uncounted`) if they are still the current ones."""
        if texts == self._texts:
            prompt, schemas = texts
            self._exact[encoding] = counts[prompt] + MESSAGE_OVERHEAD + counts[schemas]


class MadeTexts:
    """Counts of the texts fitting makes (gists, notes, the heads of cut entries): a known text
    is its count, another its upper bound meanwhile, noted for the next batch; the newest
    `MADE_TEXT_CHARS` characters of them are remembered."""

    def __init__(self) -> None:
        self._known: OrderedDict[str, int] = OrderedDict()
        self._chars = 0

    def counter(self, missed: dict[str, None]) -> Counter:
        """A counter for one fit that notes in `missed` each text it had to bound."""

        def measure(text: str) -> int:
            known = self._known.get(text)
            if known is not None:
                return known
            missed[text] = None
            return bound(text)

        return measure

    def learn(self, texts: Sequence[str], counts: Sequence[int]) -> None:
        for text, tokens in zip(texts, counts, strict=True):
            if text not in self._known:
                self._chars += len(text)
            self._known[text] = tokens
        while self._chars > MADE_TEXT_CHARS and len(self._known) > 1:
            self._chars -= len(self._known.popitem(last=False)[0])


class Counts:
    """One agent loop's token counts: what is known of each entry and of the fixed cost, and
    the batches that count the rest (see the module docstring)."""

    def __init__(self, counter: TokenCounting) -> None:
        self._counter = counter
        self.fixed = FixedCost()
        self._bounds: IdentityMemo[HistoryEntry] = IdentityMemo()
        self._exact: dict[str, IdentityMemo[HistoryEntry]] = {}  # by encoding
        self._made: dict[str, MadeTexts] = {}  # by encoding
        # The last estimate (its encoding, the counts learned by then, the entries it was made
        # of and what it gave): a turn's opening checks its window against the budget and
        # then fits its first request from the very same entries.
        self._learned = 0
        self._last: tuple[str, int, list[HistoryEntry], list[HistoryEntry]] | None = None

    def estimated(self, entries: Sequence[HistoryEntry], model: str) -> list[HistoryEntry]:
        """`entries`, each with its count if made for `model`'s encoding, else an upper bound."""
        name = encoding_name(model)
        last = self._last
        if (
            last is not None
            and last[:2] == (name, self._learned)
            and len(last[2]) == len(entries)
            and all(map(operator.is_, last[2], entries))
        ):
            return list(last[3])
        exact = self._exact.get(name)
        if exact is None:
            known = bounded(entries, self._bounds)
        else:
            known = [exact.get(entry) or _bounded(entry, self._bounds) for entry in entries]
        self._last = (name, self._learned, list(entries), known)
        return list(known)

    def fixed_cost(self, system_prompt: str, tools: Sequence[ToolSpec], model: str) -> int:
        """The system prompt's and schemas' tokens (an upper bound until counted)."""
        return self.fixed.tokens(system_prompt, tools, encoding_name(model))

    def prepare(self, model: str) -> None:
        """Have the tokenizer made ready for `model` in the background (a request's estimate
        passed `PREPARE_SHARE` of its budget): the request that first needs counts then does
        not wait for it to start."""
        self._counter.prepare(model)

    async def count(self, entries: Sequence[HistoryEntry], model: str) -> bool:
        """Count, in one batch, every text of `entries` and of the fixed cost not counted yet
        for `model`'s encoding; False when the tokenizer could not (bounds stand in)."""
        name = encoding_name(model)
        exact = self._exact.setdefault(name, IdentityMemo())
        todo = [e for e in entries if not (e.tokens or isinstance(e, NoteEntry) or exact.get(e))]
        fixed = self.fixed.uncounted(name)
        texts: dict[str, None] = dict.fromkeys(fixed)
        for entry in todo:  # collects the texts the entry's count is made of
            entry_tokens(entry, lambda text: texts.setdefault(text) or 0)
        counts = await self._counter.count(list(texts), model)
        if counts is None:
            return False
        known = dict(zip(texts, counts, strict=True))
        for entry in todo:
            counted = dataclasses.replace(entry, tokens=entry_tokens(entry, known.__getitem__))
            exact.put(entry, counted, text_size(entry))
        self._learned += 1  # an estimate made before may now be exact
        if fixed:
            self.fixed.learn(fixed, name, known)
        return True

    def made_texts(self, model: str) -> MadeTexts:
        """The remembered counts of texts fitting made, for `model`'s encoding."""
        return self._made.setdefault(encoding_name(model), MadeTexts())

    async def learn(self, made: MadeTexts, texts: Sequence[str], model: str) -> bool:
        """Count `texts` that fitting made into `made`; False when the tokenizer could not."""
        counts = await self._counter.count(texts, model)
        if counts is not None:
            made.learn(texts, counts)
        return counts is not None
