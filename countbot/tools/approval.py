"""Asking the user before a tool does something the containment cannot make safe on its own.

A tool that needs consent builds an `ApprovalRequest` and awaits the turn's `Approver` (set on
the `ToolContext` by whoever started the turn: the web UI, a chat channel, the interactive CLI).
No approver (an unattended job, a surface that cannot ask) means nobody can say yes: deny.
The policy that decides *when* to ask lives here too, so exec, MCP tools and skills share it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

ApprovalMode = Literal["auto", "on-miss", "always"]
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


def approval_reason(mode: ApprovalMode, *, sandboxed: bool, allow_listed: bool) -> str | None:
    """Why a command needs the user's yes, or None when it may run without asking.

    Leaving the sandbox always asks, whatever the mode: that is the fail-closed rule.
    """
    if not sandboxed:
        return "it would run outside the sandbox, with full access to this machine"
    if mode == "always":
        return "tools.exec.approval is 'always'"
    if mode == "on-miss" and not allow_listed:
        return "it is not in tools.exec.allow_patterns"
    return None
