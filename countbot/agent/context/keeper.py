"""The context seam of a turn: the user entry, the history it builds on, each request fitted.

The loop hands its entries here and gets back the messages of the next request (the way
pi-mono's `transformContext` is one callback): the user entry gets its per-turn context
(`prompt.turn_facts`, a `/skill` invocation), and every request is kept inside the model's
window.
Before every model call the request is fitted to `agent.context_budget` of the window
(`fit.py`: re-read files, gists of old tool results, oversized entries cut). At the start
of a turn, history that still does not fit is summarized into MEMORY.md (phase 2), after one
silent chance for the model to save facts with `memory_write`. What stays after a summary is half
the budget, so the next summary is many turns away and the prompt prefix stays stable meanwhile.
`agent.max_history` still bounds the records loaded.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from countbot.agent.context.fit import Fitted, fit, gist_cost
from countbot.agent.context.flush import Recorder, flush_memory
from countbot.agent.context.memo import IdentityMemo
from countbot.agent.context.metered import MEMORY_FLUSH, SUMMARY, MeteredProvider, SideCalls
from countbot.agent.context.summary import OverflowSummarizer
from countbot.agent.context.tokens import (
    PREPARE_SHARE,
    Counts,
    TokenCounting,
    bound,
    request_budget,
    text_size,
)
from countbot.agent.history import HistoryEntry, SummaryEntry, UserEntry, from_record
from countbot.agent.ports import HistoryWindow, MemoryRecall, SessionHistory
from countbot.agent.turn_context import TurnContext
from countbot.agent.turn_request import TurnRequest
from countbot.common.authorship import Part
from countbot.llm.provider import LLMProvider
from countbot.llm.types import Message, SystemMessage
from countbot.tools.base import ToolContext
from countbot.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

# Summary passes one turn start may run before it goes on with what fits.
MAX_SUMMARY_PASSES = 3
# Characters of excerpt per budget token: keeps a summary request well inside the window.
EXCERPT_CHARS_PER_TOKEN = 1.5


class PromptSource(Protocol):
    """What the keeper asks of the prompt (`context/prompt.py`'s `PromptBuilder` in the daemon;
    a fixed text in the loop's tests)."""

    def system_prompt_soon(self) -> Coroutine[Any, Any, str]:
        """The system prompt, to await later (its look at the files queued now)."""
        ...

    def turn_facts(self, *, channel: str | None, chat_id: str | None, unattended: bool) -> str:
        """Per-turn facts (time, channel) that ride with the user message."""
        ...

    async def skill_invocation(self, text: str) -> tuple[str, Part] | None:
        """`text` with a `/skill` invocation expanded, and the loaded skill as a part."""
        ...


class Opening:
    """A turn's opening (`ContextKeeper.opening`): the system prompt, and the user entry whose
    recalled memory may still be on its way."""

    __slots__ = ("_entry", "_recall", "prompt")

    def __init__(
        self, entry: UserEntry, prompt: str, recall: asyncio.Task[Part | None] | None
    ) -> None:
        self.prompt = prompt
        self._entry = entry
        self._recall = recall

    @property
    def message(self) -> str:
        """The user's message (a `/skill` invocation expanded): known before the recall."""
        return self._entry.content

    async def user(self) -> UserEntry:
        """The user entry whole: the recalled block (if any) added as its last part."""
        recall, self._recall = self._recall, None
        if recall is not None:
            try:
                recalled = await recall
            except asyncio.CancelledError:
                recall.cancel()  # the turn was cancelled while it waited: so is the search
                raise
            if recalled is not None:
                self._entry = replace(self._entry, parts=(*self._entry.parts, recalled))
        return self._entry

    def close(self) -> None:
        """Stop a recall never joined (the turn ended, failed or was cancelled before it needed
        the entry whole)."""
        recall, self._recall = self._recall, None
        if recall is None:
            return
        if recall.done():
            if not recall.cancelled():
                recall.exception()  # read: its failure is no one's to see now
        else:
            recall.cancel()


@dataclass(kw_only=True, eq=False, slots=True)
class ContextKeeper:
    """Loads a turn's history and fits each request; see the module docstring."""

    history: SessionHistory
    summarizer: OverflowSummarizer
    prompt: PromptSource
    tools: ToolRegistry
    counter: TokenCounting
    recall: MemoryRecall | None = None
    # Entries made from the store's records, kept between turns, and what is known of their
    # tokens.
    _made: IdentityMemo[HistoryEntry] = field(default_factory=IdentityMemo, init=False)
    _counts: Counts = field(init=False)
    # Each entry's message as sent (by whether the model sees images), kept between requests.
    _messages: dict[bool, IdentityMemo[Message]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._counts = Counts(self.counter)

    async def opening(self, request: TurnRequest) -> Opening:
        """The turn's user entry and the system prompt of all its requests, made side by side:
        the look at the prompt's files is queued first, and auto-recall's search starts as soon
        as the message is known, to be joined (`Opening.user`) only when the entry is needed
        whole: the model, the spending check and the tools are chosen while the vector worker
        embeds the message."""
        prompt = self.prompt.system_prompt_soon()
        recall: asyncio.Task[Part | None] | None = None
        try:
            user = await self._message_entry(request)
            # Auto-recall: cited memory hits ride with the message (a greeting looks for none).
            if self.recall is not None and self.recall.searches(user.content):
                recall = asyncio.create_task(self.recall.recall(user.content, request.session_id))
            return Opening(user, await prompt, recall)
        except BaseException:
            prompt.close()  # never awaited: its look's answer is dropped (a no-op once awaited)
            if recall is not None:
                recall.cancel()
            raise

    async def _message_entry(self, request: TurnRequest) -> UserEntry:
        """The turn's user entry before auto-recall: its message (a `/skill` invocation
        expanded), the per-turn context that rides with it (time, channel, what the surface
        added) and its parts (what came with it, a loaded skill), each with who wrote it."""
        message, extra, parts = request.message, request.context, list(request.parts)
        facts = self.prompt.turn_facts(
            channel=request.channel, chat_id=request.chat_id, unattended=request.unattended
        )
        # Only the owner loads a skill: someone else's `/name` is their text, not a command.
        invocation = await self.prompt.skill_invocation(message) if request.author.owned else None
        if invocation is not None:
            message, skill = invocation
            parts.append(skill)
        if extra:
            facts = f"{facts}\n{extra}"
        return UserEntry(message, request.media, facts, author=request.author, parts=tuple(parts))

    def budget(self, context: TurnContext) -> int:
        """Prompt tokens one request of the turn may use with its model."""
        choice, share = context.choice, context.limits.context_budget
        return request_budget(choice.context_window, share, choice.output_limit)

    def excerpt_budget(self, context: TurnContext) -> int:
        """Tokens a summary's excerpt may take: the housekeeping model's window may be smaller."""
        choice, share = context.choice, context.limits.context_budget
        return request_budget(choice.housekeeping_window, share, choice.output_limit)

    async def load(
        self,
        context: TurnContext,
        current: HistoryEntry,
        tool_context: ToolContext,
        side: SideCalls,
    ) -> list[HistoryEntry]:
        """The history a turn of `context` starting with `current` builds on, summarized first if
        needed; `side` audits, meters and announces the flush and summary calls."""
        # Housekeeping runs on the utility model (`model.utility`), metered by purpose.
        metered = side.metered(context.choice.housekeeping)
        summarizing, record = metered[SUMMARY], side.record
        entries = await self._window(context, summarizing)
        for _ in range(MAX_SUMMARY_PASSES):
            if not await self._overflows(context, [*entries, current]):
                break
            if not await self._summarize(context, metered, entries, tool_context, record):
                break
            entries = await self._window(context, summarizing)
        return entries

    def load_now(self, context: TurnContext, current: HistoryEntry) -> list[HistoryEntry] | None:
        """What `load` returns, when that needs no waiting (most warm turns): the window in
        memory, no summary due, and the request within budget by its upper bound; else None."""
        limit = context.limits.max_history
        window = self.history.cached_window(context.session_id, limit + 1)
        if window is None or self.summarizer.needs_pass(len(window.records)):
            return None
        entries = self._entries(window, limit)
        return entries if self._within_bound(context, [*entries, current]) else None

    async def messages(
        self, context: TurnContext, *, exact: bool = False
    ) -> tuple[list[Message], Fitted]:
        """The next request's messages (the system prompt, then the turn's entries as they fit)
        and how they were fitted: their estimated prompt tokens (an upper bound unless `exact`:
        then counted by the tokenizer even when the estimate fits)."""
        fitted = await self._fit(context, context.entries, exact=exact)
        return [SystemMessage(context.prompt), *fitted.messages], fitted

    async def _fit(
        self, context: TurnContext, entries: Sequence[HistoryEntry], *, exact: bool = False
    ) -> Fitted:
        """`entries` as they fit the next request (the system prompt and tools counted in)."""
        choice, prompt, tools = context.choice, context.prompt, context.tools
        budget, model, counts = self.budget(context), choice.model, self._counts
        sent = self._messages.setdefault(choice.vision, IdentityMemo())
        # What is known first (counts made, upper bounds for the rest): when it fits, nothing
        # is reduced and the tokenizer is not asked.
        known = counts.estimated(entries, model)
        fixed = counts.fixed_cost(prompt, tools, model)
        history = sum(e.tokens for e in known)
        if not exact and fixed + history <= budget:
            if history > (budget - fixed) * PREPARE_SHARE:  # a longer one will need counts
                counts.prepare(model)
            return fit(
                known, budget=budget, fixed=fixed, count=bound, vision=choice.vision, made=sent
            )
        if not await counts.count(entries, model):
            log.warning("fitting a request to %s with upper bounds of its tokens", model)
        known = counts.estimated(entries, model)
        fixed = counts.fixed_cost(prompt, tools, model)
        made, missed = counts.made_texts(model), {}
        fitting = functools.partial(fit, known, budget=budget, fixed=fixed, vision=choice.vision)
        fitted = fitting(count=made.counter(missed), made=sent)
        # Gists, notes and heads this fit made, counted: fitting again with them is exact.
        if missed and await counts.learn(made, list(missed), model):
            fitted = fitting(count=made.counter({}), made=sent)
        return fitted

    async def _overflows(self, context: TurnContext, entries: Sequence[HistoryEntry]) -> bool:
        """Whether `entries` leave exchanges out of the next request (then summarize); the upper
        bound decides most turns without fitting (or projecting) anything."""
        if self._within_bound(context, entries):
            return False
        return (await self._fit(context, entries)).overflow

    def _within_bound(self, context: TurnContext, entries: Sequence[HistoryEntry]) -> bool:
        """Whether a request of `entries` fits its budget by what is known of its tokens."""
        model = context.choice.model
        known = self._counts.estimated(entries, model)
        fixed = self._counts.fixed_cost(context.prompt, context.tools, model)
        return fixed + sum(e.tokens for e in known) <= self.budget(context)

    async def _window(self, context: TurnContext, provider: LLMProvider) -> list[HistoryEntry]:
        limit, session_id = context.limits.max_history, context.session_id
        window = await self.history.load_window(session_id, limit + 1)
        if self.summarizer.needs_pass(len(window.records)):
            done = await self.summarizer.summarize(session_id, provider, window.summary)
            if done is not None:
                window = await self.history.load_window(session_id, limit)
        return self._entries(window, limit)

    def _entries(self, window: HistoryWindow, limit: int) -> list[HistoryEntry]:
        """The entries of the running summary and the newest `limit` records of `window`."""
        sources: list[dict[str, Any] | str] = [window.summary] if window.summary else []
        sources.extend(window.records[-limit:])
        return [self._entry(source) for source in sources]

    def _entry(self, source: dict[str, Any] | str) -> HistoryEntry:
        """The entry of a stored record (or of the running summary's text), made once while the
        store keeps handing out that same object."""
        made = self._made.get(source)
        if made is None:
            made = SummaryEntry(source) if isinstance(source, str) else from_record(source)
            self._made.put(source, made, text_size(made))
        return made

    async def _summarize(
        self,
        context: TurnContext,
        metered: dict[str, MeteredProvider],
        entries: list[HistoryEntry],
        tool_context: ToolContext,
        record: Recorder,
    ) -> bool:
        """One phase-2 pass: keep the newest half-budget of records, summarize what is older."""
        budget = self.budget(context)
        known = self._counts.estimated(entries, context.choice.model)
        records = [e for e in known if not isinstance(e, SummaryEntry)]
        keep, used = 0, 0
        for entry in reversed(records):
            used += gist_cost(entry)
            if keep and used > budget // 2:
                break
            keep += 1
        summary = entries[0].text if entries and isinstance(entries[0], SummaryEntry) else None

        async def flush(transcript: str) -> None:
            flushing = metered[MEMORY_FLUSH]
            await flush_memory(flushing, transcript, self.tools, tool_context, record)

        done = await self.summarizer.summarize(
            context.session_id,
            metered[SUMMARY],
            summary,
            keep=keep,
            max_chars=int(self.excerpt_budget(context) * EXCERPT_CHARS_PER_TOKEN),
            before=flush,
        )
        return done is not None
