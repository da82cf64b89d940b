"""A turn's tool calls: run in the order the model asked, consecutive idempotent ones at once.

Every call is answered, so the history stays valid for every provider: one the turn was not
given is refused, one the user's Stop, a message sent meanwhile or the tool-call budget came
before is skipped, and the repeat of an identical call is answered from the first result
(`tool_loops.LoopGuard`, which also says when the turn goes in circles). Each result is committed
and audited as it is made.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from countbot.agent.events import AgentEvent, ToolEnd, ToolStart
from countbot.agent.history import ToolResultEntry
from countbot.agent.journal import Journal
from countbot.agent.ports import SteeringInbox
from countbot.agent.tool_loops import LoopGuard
from countbot.agent.turn_context import TurnContext
from countbot.llm.types import ToolCall
from countbot.tools.base import ToolContext, ToolResult
from countbot.tools.registry import ToolRegistry


@dataclass(slots=True)
class ToolRuns:
    """One turn's tool calls, a response's at a time (`run`)."""

    registry: ToolRegistry
    context: TurnContext
    tool_context: ToolContext
    journal: Journal
    steering: SteeringInbox | None
    # The only tools the turn may run (`TurnRequest.allowed_tools`); None: any registered one.
    allowed: frozenset[str] | None
    # Calls started in the turn (its tool-call budget is `limits.max_iterations`).
    made: int = 0
    guard: LoopGuard = field(default_factory=LoopGuard)

    async def run(self, calls: tuple[ToolCall, ...]) -> AsyncIterator[AgentEvent]:
        """Run a response's calls, batch by batch; results are committed in the asked order."""
        index = 0
        while index < len(calls):
            batch = [calls[index]]
            if self._idempotent(calls[index]):
                while index + len(batch) < len(calls) and self._idempotent(
                    calls[index + len(batch)]
                ):
                    batch.append(calls[index + len(batch)])
            index += len(batch)
            async for event in self._batch(batch):
                yield event

    async def _batch(self, batch: list[ToolCall]) -> AsyncIterator[AgentEvent]:
        """One call, or consecutive idempotent ones run concurrently."""
        results: list[tuple[ToolCall, ToolResult]] = []
        runnable: list[ToolCall] = []
        shown: list[ToolCall] = []
        for call in batch:
            skip = self._skip_reason(call)
            if skip is not None:
                results.append((call, skip))
                continue
            self.made += 1
            shown.append(call)
            yield ToolStart(call.id, call.name, _shown_arguments(call))
            repeat = self.guard.repeat_of(call)
            if repeat is not None:
                results.append((call, repeat))
            else:
                runnable.append(call)
        executed = await asyncio.gather(
            *(self.registry.execute(call, self.tool_context) for call in runnable)
        )
        for call, result in zip(runnable, executed, strict=True):
            self.guard.record(call, result, idempotent=self._idempotent(call))
            results.append((call, result))
        results.sort(key=lambda pair: batch.index(pair[0]))
        for call, result in results:
            await self._record(call, result)
            if call in shown:
                yield ToolEnd(
                    call.id,
                    call.name,
                    result.content,
                    result.status,
                    result.duration_ms,
                    result.images,
                )

    def _idempotent(self, call: ToolCall) -> bool:
        tool = self.registry.get(call.name)
        return tool is not None and tool.idempotent

    def _skip_reason(self, call: ToolCall) -> ToolResult | None:
        if self.allowed is not None and call.name not in self.allowed:
            # A model obeying text it read asks for a tool this turn was not given: refused
            # before it starts, whatever the tool is.
            return ToolResult(f"Refused: {call.name} is not among this turn's tools.", "error")
        if self.context.token.cancelled:
            return ToolResult("Cancelled by the user before it ran.", "cancelled")
        if self.steering is not None and self.steering.pending():
            return ToolResult("Skipped: the user sent a new message; read it first.", "skipped")
        if self.made >= self.context.limits.max_iterations:
            return ToolResult("Skipped: the tool-call limit for this turn was reached.", "skipped")
        return None

    async def _record(self, call: ToolCall, result: ToolResult) -> None:
        entry = ToolResultEntry(
            call.id,
            call.name,
            result.content,
            result.status,
            result.duration_ms,
            images=result.images,
            untrusted=result.untrusted,
        )
        # Committed side by side: the stores queue both writes on one database thread. (Made
        # beside the next model call instead, they measured slower: two chained hand-offs
        # competing with the stream for the GIL.)
        added, _ = await asyncio.gather(
            self.journal.add(entry),
            self.journal.audit(call.id, call.name, _shown_arguments(call), result),
        )
        self.context.entries.append(added)


def _shown_arguments(call: ToolCall) -> dict[str, Any] | str:
    """A call's arguments as shown and audited: parsed, else the raw text the model wrote."""
    return call.arguments if call.arguments is not None else call.arguments_raw
