"""The ReAct loop: stream from the model, run the tools it asks for, repeat until it answers.

One `AgentLoop` serves every surface. It reads history through `SessionHistory`, stores every
finalized entry through its `Journal` into the `EntryLog` (so a crash loses at most the text
still streaming), and yields typed `AgentEvent`s. It never raises into the caller: failures end
the turn with a `TurnError`, cancellation with `TurnCancelled`.

A turn opens by making its `TurnContext` (`_open`: user entry, prompt, model, tools, history),
then runs steps (`_step`: one model call and the tools it asks for) until one ends it.
`tests/support/loop_harness.py` runs this class with everything it talks to in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from countbot.agent import notices
from countbot.agent.cancel import while_running
from countbot.agent.context.fit import Fitted
from countbot.agent.context.keeper import ContextKeeper, Opening
from countbot.agent.context.metered import SideCalls
from countbot.agent.context.tokens import bounded, schema_estimate
from countbot.agent.events import (
    AgentEvent,
    TurnCancelled,
    TurnDone,
    TurnError,
    TurnNotice,
)
from countbot.agent.history import (
    AssistantEntry,
    HistoryEntry,
    NoteEntry,
    UserEntry,
)
from countbot.agent.journal import Journal, NotSavedError
from countbot.agent.model_choice import ModelChoice, ModelNotConfiguredError, ModelResolver
from countbot.agent.ports import (
    AgentHooks,
    EntryLog,
    SpendCheck,
    SpendingGuard,
    SteeringInbox,
)
from countbot.agent.tool_runs import ToolRuns
from countbot.agent.toolset import select_tools
from countbot.agent.turn_context import TurnContext
from countbot.agent.turn_request import TurnRequest
from countbot.agent.turn_stream import ModelOutcome, call_model
from countbot.config.settings import AgentSettings
from countbot.llm.types import Message, ToolSpec, Usage
from countbot.tools.base import ToolContext
from countbot.tools.registry import ToolRegistry

log = logging.getLogger(__name__)


NO_MODEL = (
    "No model is configured yet. Choose one on the Settings page (or set model.name in "
    "config.yaml), then send your message again."
)
# Sent (never stored) when an answer was cut at the output limit, to get the rest once.
CONTINUE = (
    "[Your answer was cut off at the output limit. Continue exactly where it stopped, without "
    "repeating anything.]"
)
NO_VISION = (
    "The current model cannot see images, so it got only a note that an image was attached. "
    "Choose a model with vision on the Settings page to send images."
)


@dataclass(slots=True)
class _Turn:
    """A turn's running state beside its context."""

    journal: Journal
    tool_context: ToolContext
    steering: SteeringInbox | None
    # Made once the model and tools are chosen (`_open`): the context, and its tool calls' runs.
    context: TurnContext = field(init=False)
    tools: ToolRuns = field(init=False)
    usage: Usage = field(default_factory=Usage)
    # Budget warnings given during the turn, shown with its answer.
    warnings: list[str] = field(default_factory=list)
    # What the model wrote in this turn, and the answer being written (continuations joined).
    texts: list[str] = field(default_factory=list)
    answer: str = ""
    continued: bool = False
    # Its last event is out: the turn ended (answered, stopped, failed, or cancelled).
    ended: bool = False
    # The model that wrote the latest response (a fallback's name when one took over).
    model: str = ""


@dataclass(kw_only=True, eq=False, slots=True)
class AgentLoop:
    """The agent's heart; see the module docstring.

    `keeper` is the one seam between stored history and a model request: it builds the user
    entry, loads (and summarizes) the history, and makes every request from the turn's context.
    `sessions` stores the turn's entries; its answers' cost counts against `spends_for` (None:
    the turn's own session).
    """

    resolve_model: ModelResolver
    keeper: ContextKeeper
    tools: ToolRegistry
    settings: AgentSettings
    workspace: Path
    sessions: EntryLog
    hooks: AgentHooks = field(default_factory=AgentHooks)
    spending: SpendingGuard | None = None
    spends_for: str | None = None

    async def process_direct(self, request: TurnRequest) -> str:
        """Run one turn and return its final text (`notices.final_text`)."""
        return await notices.final_text(self.process_message(request))

    async def process_message(self, request: TurnRequest) -> AsyncIterator[AgentEvent]:
        """Run one turn, yielding its events; the last one is done, error or cancelled."""
        turn = self._new_turn(request)
        try:
            async for event in self._open(turn, request):
                yield event
            if not turn.ended:
                async for event in self._steps(turn):
                    yield event
        except NotSavedError as exc:  # a full disk: said as such, not as an internal error
            yield TurnError(str(exc), retryable=True, code="not_saved")
        except Exception as exc:  # the loop must never take its caller down
            log.exception("turn failed in session %s", request.session_id)
            with contextlib.suppress(NotSavedError):  # the error said first is the one shown
                await turn.journal.settled()
            yield TurnError(f"internal error: {exc}", retryable=False)

    def _new_turn(self, request: TurnRequest) -> _Turn:
        session_id, token = request.session_id, request.cancel_token
        return _Turn(
            journal=Journal(
                self.sessions,
                self.hooks,
                session_id,
                request.message,
                request.channel,
                self.spends_for or session_id,
            ),
            tool_context=ToolContext(
                session_id,
                self.workspace,
                request.channel,
                request.chat_id,
                token.event,
                request.approver,
            ),
            steering=request.steering,
        )

    async def _open(self, turn: _Turn, request: TurnRequest) -> AsyncIterator[AgentEvent]:
        """Make the turn's context: its user entry, prompt, model, tools and history. An opening
        that ends the turn (no model, a budget's stop, a Stop) sets `turn.ended`. Auto-recall's
        search runs while the model, the spending check and the tools are chosen; the user entry
        is joined whole before the history is fitted around it."""
        opening = await self.keeper.opening(request)
        try:
            async for event in self._opened(turn, request, opening):
                yield event
        finally:
            opening.close()

    async def _opened(
        self, turn: _Turn, request: TurnRequest, opening: Opening
    ) -> AsyncIterator[AgentEvent]:
        try:
            choice, stop, economy = await self._choose_model(turn, request.model)
        except ModelNotConfiguredError:
            await turn.journal.commit(await opening.user())
            await turn.journal.commit(NoteEntry(NO_MODEL, code="no_model"))
            turn.ended = True
            yield TurnError(NO_MODEL, retryable=False, code="no_model")
            return
        if stop is not None:
            await turn.journal.commit(await opening.user())
            yield await self._end_budget(turn, stop)
            return
        tools = self._offered_tools(choice, opening.message, request.allowed_tools)
        token = request.cancel_token
        prompt = opening.prompt
        turn.context = TurnContext(request.session_id, prompt, choice, tools, self.settings, token)
        turn.tools = ToolRuns(
            self.tools,
            turn.context,
            turn.tool_context,
            turn.journal,
            turn.steering,
            request.allowed_tools,
        )
        user = await opening.user()
        async for event in self._load_history(turn, user):
            yield event
        if token.cancelled:
            await turn.journal.commit(user)
            yield await self._end_cancelled(turn)
            return
        # Stored while the first model call goes out; every later write waits for it.
        turn.context.entries.append(turn.journal.add_soon(user))
        shown = [economy] if economy is not None else []
        if user.images and not choice.vision:
            shown.append(TurnNotice("no_vision", NO_VISION))
        for notice in shown:
            await turn.journal.commit(NoteEntry(notice.text, code=notice.code))
            yield notice

    def _offered_tools(
        self, choice: ModelChoice, message: str, allowed: frozenset[str] | None
    ) -> tuple[ToolSpec, ...]:
        """The tools this turn's requests offer: chosen for the message (a small model gets a
        few), and only those the turn's source allows (a trigger names its own)."""
        tools = select_tools(
            self.tools,
            message,
            small=choice.small,
            budget=self.settings.tool_budget,
            cost=schema_estimate,
        )
        if allowed is None:
            return tools
        return tuple(spec for spec in tools if spec.name in allowed)

    # --- the steps ---------------------------------------------------------------------------

    async def _steps(self, turn: _Turn) -> AsyncIterator[AgentEvent]:
        """Steps until one ends the turn; at the step limit the turn ends with what the model
        wrote and a `step_limit` notice."""
        limit = turn.context.limits.max_iterations
        for _ in range(limit):
            async for event in self._step(turn):
                yield event
            if turn.ended:
                return
            if turn.tools.made >= limit:
                break  # the tool-call budget is spent: more model calls could only be refused
        notice = notices.step_limit(limit)
        yield notice
        yield await self._end_stopped(turn, notice)

    async def _step(self, turn: _Turn) -> AsyncIterator[AgentEvent]:
        """One model call and the tools it asks for; a step that ends the turn sets `ended`."""
        context = turn.context
        if context.token.cancelled:
            yield await self._end_cancelled(turn)
            return
        await self._apply_steering(turn)
        messages, fitted, stop = await self._next_request(turn)
        if stop is not None:
            yield await self._end_budget(turn, stop)
            return
        outcome = ModelOutcome()
        async for item in call_model(context, messages):
            if isinstance(item, ModelOutcome):
                outcome = item
            else:
                yield item
        outcome = self._count_usage(turn, outcome, fitted)
        if outcome.cancelled:
            if outcome.text:
                await turn.journal.commit(outcome.partial_entry("cancelled"))
            yield await self._end_cancelled(turn)
            return
        if outcome.error is not None:
            yield await self._end_error(turn, outcome)
            return
        assistant = await self._marked(turn, outcome.entry())
        await self._add(turn, assistant)
        turn.texts.append(assistant.text)
        turn.answer += assistant.text
        if not assistant.tool_calls:
            async for event in self._answered(turn, assistant):
                yield event
            return
        turn.answer = ""
        async for event in turn.tools.run(assistant.tool_calls):
            yield event
        if turn.tools.guard.stop is not None:
            notice = notices.tool_loop(*turn.tools.guard.stop)
            yield notice
            yield await self._end_stopped(turn, notice)

    def _count_usage(self, turn: _Turn, outcome: ModelOutcome, fitted: Fitted) -> ModelOutcome:
        """`outcome` with its usage complete, added to the turn's."""
        usage = outcome.usage
        if outcome.runaway:  # stopped before the server reported usage: estimate it
            (spent,) = bounded([AssistantEntry(outcome.text)])
            usage = Usage(fitted.tokens, spent.tokens)
        usage = _with_recall(usage, fitted.recall_tokens)
        turn.usage = turn.usage + usage
        turn.model = outcome.model
        return replace(outcome, usage=usage)

    async def _answered(self, turn: _Turn, assistant: AssistantEntry) -> AsyncIterator[AgentEvent]:
        """End the turn with its answer, or continue once an answer the output limit cut."""
        if assistant.stop_reason in ("length", "repetition"):
            thinking = not assistant.text and bool(assistant.reasoning)
            # A text answer: asking for the rest repeats no action. Not for a small model, whose
            # long answers are rambling, not a cut-off thought.
            if not turn.continued and not turn.context.choice.small:
                turn.continued = True
                yield notices.truncated(continuing=True, thinking=thinking)
                turn.context.entries.append(UserEntry(CONTINUE))
                return
            runaway = assistant.stop_reason == "repetition"
            notice = notices.truncated(continuing=False, thinking=thinking, runaway=runaway)
            await turn.journal.commit(NoteEntry(notice.text, code=notice.code))
            yield notice
        turn.ended = True
        if not turn.answer.strip() and assistant.stop_reason not in ("length", "repetition"):
            notice = notices.empty_answer(assistant.stop_reason)
            await turn.journal.commit(NoteEntry(notice.text, code=notice.code))
            yield notice
        answer = _with_warnings(turn.answer, turn.warnings)
        yield TurnDone(answer, turn.usage, assistant.model)

    async def _load_history(self, turn: _Turn, user: UserEntry) -> AsyncIterator[AgentEvent]:
        """Fill the context's entries; a summary first shows `summarizing`, and a Stop ends it."""
        context = turn.context
        # A warm window that fits is at hand: no task, queue or pass of the loop for it.
        now = self.keeper.load_now(context, user)
        if now is not None:
            context.entries.extend(now)
            return
        shown: asyncio.Queue[AgentEvent] = asyncio.Queue()
        side = SideCalls(
            turn.journal.audit_flush,
            turn.journal.report_usage,
            lambda: shown.put_nowait(notices.summarizing()),
        )
        work = asyncio.create_task(self.keeper.load(context, user, turn.tool_context, side))
        async for event in while_running(work, shown, context.token):
            yield event
        if not work.cancelled():
            context.entries.extend(work.result())

    async def _apply_steering(self, turn: _Turn) -> None:
        if turn.steering is None:
            return
        for said in turn.steering.drain():
            context = "[Sent while you were working on the previous request]"
            context = f"{context}\n{said.context}" if said.context else context
            entry = UserEntry(said.content, context=context, author=said.author, parts=said.parts)
            await self._add(turn, entry)
            turn.tool_context.steered.append(replace(said, context=context))

    async def _marked(self, turn: _Turn, entry: AssistantEntry) -> AssistantEntry:
        """`entry` with the untrusted content its turn had read (the gate's ledger), so memory
        never keeps an answer that may repeat a page's words as the owner's own."""
        if not entry.text.strip():
            return entry  # tool calls only: nothing memory keeps
        await turn.journal.settled()  # the ledger reads the stored session: the user's entry too
        read = await self.tools.untrusted_read(turn.tool_context)
        return replace(entry, read=read) if read else entry

    async def _add(self, turn: _Turn, entry: HistoryEntry) -> None:
        """Commit `entry` and add it to the turn's history."""
        turn.context.entries.append(await turn.journal.add(entry))

    # --- endings -----------------------------------------------------------------------------

    async def _end_cancelled(self, turn: _Turn) -> TurnCancelled:
        turn.ended = True
        await turn.journal.commit(NoteEntry("Cancelled.", code="cancelled"))
        return TurnCancelled()

    async def _end_error(self, turn: _Turn, outcome: ModelOutcome) -> TurnError:
        turn.ended = True
        error = outcome.error
        assert error is not None
        if outcome.text:
            await turn.journal.commit(await self._marked(turn, outcome.partial_entry("error")))
        await turn.journal.commit(NoteEntry(f"Error: {error.message}"))
        return TurnError(error.message, error.retryable)

    async def _next_request(self, turn: _Turn) -> tuple[list[Message], Fitted, str | None]:
        """The next request's messages, how they were fitted (their estimated tokens) and the
        budget's stop, if any.

        The estimate is an upper bound where the tokenizer has not counted: only when a spending
        limit would stop the call by it is the request counted (in the token worker) and checked
        again, so a turn within its limits waits for no count.
        """
        context = turn.context
        messages, fitted = await self.keeper.messages(context)
        stop = await self._spend_check(turn, context.choice, fitted.tokens)
        if stop is not None:
            messages, fitted = await self.keeper.messages(context, exact=True)
            stop = await self._spend_check(turn, context.choice, fitted.tokens)
        return messages, fitted, stop

    async def _choose_model(
        self, turn: _Turn, requested: str | None
    ) -> tuple[ModelChoice, str | None, TurnNotice | None]:
        """The turn's model, the budget's stop (if any) and the notice of a switch to the
        economy model (the first time in the conversation that day)."""
        choice = await self.resolve_model(requested)
        verdict = await self._spend_verdict(turn, choice, 0)
        if verdict.stop is not None or verdict.economy is None:
            return choice, verdict.stop, None
        choice = await self.resolve_model(verdict.economy)
        notice = verdict.economy_notice
        return choice, None, notices.economy(choice.model, notice) if notice else None

    async def _spend_check(self, turn: _Turn, choice: ModelChoice, estimate: int) -> str | None:
        """The budget's stop notice for the next call, if any (a warning is kept for the end)."""
        return (await self._spend_verdict(turn, choice, estimate)).stop

    async def _spend_verdict(self, turn: _Turn, choice: ModelChoice, estimate: int) -> SpendCheck:
        if self.spending is None:
            return SpendCheck()
        verdict = await self.spending.check(
            turn.journal.session_id, choice.model, turn.usage.total_tokens, estimate
        )
        if verdict.warning is not None:
            await turn.journal.commit(NoteEntry(verdict.warning))
            turn.warnings.append(verdict.warning)
        return verdict

    async def _end_budget(self, turn: _Turn, notice: str) -> TurnDone:
        turn.ended = True
        await turn.journal.commit(NoteEntry(notice))
        return TurnDone(_with_warnings(notice, turn.warnings), turn.usage)

    async def _end_stopped(self, turn: _Turn, notice: TurnNotice) -> TurnDone:
        """End a turn the loop stopped (step limit, tool loop) with what the model wrote; the
        notice, sent just before, is stored after it as a note."""
        turn.ended = True
        await turn.journal.commit(NoteEntry(notice.text, code=notice.code))
        written = "\n\n".join(text.strip() for text in turn.texts if text.strip())
        return TurnDone(_with_warnings(written, turn.warnings), turn.usage, turn.model)


def _with_recall(usage: Usage, recall_tokens: int) -> Usage:
    """A call's usage with the share of its prompt that was auto-recall's blocks (estimated)."""
    if not usage.prompt_tokens or not recall_tokens:
        return usage
    return dataclasses.replace(usage, recall_tokens=min(recall_tokens, usage.prompt_tokens))


def _with_warnings(text: str, warnings: list[str]) -> str:
    return "\n\n".join([text, *warnings]) if warnings else text
