"""Loop detection: a turn that goes in circles is told so, then stopped.

A model that lost its way repeats itself: the same call with the same arguments (a tiny model
once wrote the same file 25 times for one request), the same target over and over with other
arguments, or failure after failure. The repeat of an identical call is not run again: it is
answered from the first result with a note saying so; a few more, and the turn stops with a
`tool_loop` notice instead of burning its step budget.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from countbot.llm.types import ToolCall
from countbot.tools.base import ToolResult

# The identical call that stops the turn (the second is answered from the first result).
IDENTICAL_CALLS = 3
# Calls of one tool that changes things on one target (its first argument: a path, a command)
# that stop the turn; reads may page through one file.
SAME_TARGET_CALLS = 5
# Failed calls in a row that stop the turn.
FAILURES_IN_A_ROW = 5


@dataclass(slots=True)
class LoopGuard:
    """One per turn: `repeat_of` before a call runs, `record` after; `stop` says why to end."""

    stop: tuple[str, int] | None = None  # (the tool, how many times) once the turn must end
    _first: dict[str, ToolResult] = field(default_factory=dict)
    _calls: Counter[str] = field(default_factory=Counter)
    _targets: Counter[str] = field(default_factory=Counter)
    _failures: int = 0

    def repeat_of(self, call: ToolCall) -> ToolResult | None:
        """The answer to a call made before with the same arguments (None: run it)."""
        key = _identity(call)
        first = self._first.get(key)
        if first is None:
            return None
        self._calls[key] += 1
        self._check(call.name, self._calls[key], IDENTICAL_CALLS)
        note = (
            f"[You already called {call.name} with exactly these arguments in this turn; "
            "this is that call's result again. Calling it again changes nothing: use it, do "
            "something different, or answer the user.]"
        )
        return ToolResult(f"{note}\n{first.content}", first.status, untrusted=first.untrusted)

    def record(self, call: ToolCall, result: ToolResult, *, idempotent: bool) -> None:
        """Count a call that ran (`idempotent`: a read, whose target may repeat freely)."""
        key = _identity(call)
        if key not in self._first:
            self._first[key] = result
            self._calls[key] = 1
        target = None if idempotent else _target(call)
        if target is not None:
            self._targets[target] += 1
            self._check(call.name, self._targets[target], SAME_TARGET_CALLS)
        self._failures = self._failures + 1 if result.status == "error" else 0
        self._check(call.name, self._failures, FAILURES_IN_A_ROW)

    def _check(self, tool: str, count: int, limit: int) -> None:
        if count >= limit and self.stop is None:
            self.stop = (tool, count)


def _identity(call: ToolCall) -> str:
    arguments = call.arguments if call.arguments is not None else call.arguments_raw
    return call.name + "\0" + json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def _target(call: ToolCall) -> str | None:
    """`tool` + its first string argument (what it acts on), if it has one."""
    for value in (call.arguments or {}).values():
        if isinstance(value, str):
            return f"{call.name}\0{value}"
        break
    return None
