"""Asking the user before a tool does something the containment cannot make safe on its own.

A tool that needs consent builds an `ApprovalRequest` and awaits the turn's `Approver` (set on
the `ToolContext` by whoever started the turn: the web UI, a chat channel, the interactive CLI).
No approver (an unattended job, a surface that cannot ask) means nobody can say yes: deny.
When to ask is each tool's own policy (exec's is `execution/shell.py`'s `approval_reason`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

ApprovalDecision = Literal["once", "always", "deny"]


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What the user is asked: which tool, what it would do, and why it needs a yes.

    `key` is what "Always allow" remembers (for exec: the exact command).
    """

    tool: str
    summary: str
    reason: str
    key: str


class Approver(Protocol):
    """Asks the user where the turn came from; answers "deny" when no answer comes in time."""

    async def __call__(self, request: ApprovalRequest) -> ApprovalDecision: ...
