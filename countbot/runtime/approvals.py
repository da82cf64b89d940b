"""The approval broker: puts a tool's question to the user where the turn came from and waits.

Each turn gets its own `Approver` (`broker.approver(...)`). Asking means announcing an
`ApprovalAsked` event through the turn's `show` callback (the daemon publishes it in the
session's event stream, so the web UI, a chat channel and a CLI client watching the session all
see it; the in-process CLI prompts on its terminal) and waiting for `broker.answer(...)`. No
answer within `tools.exec.approval_timeout`, or the turn cancelled, means deny; an unattended turn
(a scheduled job, the heartbeat) is denied at once. Every outcome is announced as an
`ApprovalSettled` event (cards disappear, a job's run gets a note) and written to the audit log;
"Always allow" is remembered in the store per agent, tool and exact key: the agent whose turn
asked, so it never lets another agent act.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from countbot.config.settings import MAIN
from countbot.store.approval_rules import ApprovalRules
from countbot.store.audit import AuditLog
from countbot.tools.approval import ApprovalDecision, ApprovalRequest, Approver

log = logging.getLogger(__name__)

ApprovalOutcome = Literal["answered", "timeout", "cancelled", "unattended"]
DECISIONS: tuple[ApprovalDecision, ...] = ("once", "always", "deny")


@dataclass(frozen=True, slots=True)
class TurnAddress:
    """Where a turn came from: who can be asked, whether anyone is there at all, and the agent
    whose turn it is (whose "Always allow" rules apply)."""

    session_id: str
    channel: str | None = None
    chat_id: str | None = None
    unattended: bool = False
    agent: str = MAIN


@dataclass(frozen=True, slots=True)
class ApprovalAsked:
    """A question waiting for the user; `expires_at` is Unix time, when it becomes a deny."""

    id: str
    tool: str
    summary: str
    reason: str
    timeout: float
    expires_at: float
    channel: str | None
    chat_id: str | None
    type: Literal["approval_request"] = "approval_request"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ApprovalSettled:
    """A question's end: the decision, how it came about, and who answered (if anyone)."""

    id: str
    tool: str
    summary: str
    decision: ApprovalDecision
    outcome: ApprovalOutcome
    by: str = ""
    type: Literal["approval_settled"] = "approval_settled"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


ApprovalEvent = ApprovalAsked | ApprovalSettled
Show = Callable[[ApprovalEvent], None]


@dataclass(slots=True)
class PendingApproval:
    """An open question and the turn it belongs to."""

    asked: ApprovalAsked
    address: TurnAddress
    key: str
    answer: asyncio.Future[tuple[ApprovalDecision, str]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class ApprovalBroker:
    """Open questions of every turn, the "Always allow" rules and the audit of each decision."""

    def __init__(self, rules: ApprovalRules, audit: AuditLog, timeout: Callable[[], float]):
        self.rules = rules
        self._audit = audit
        # Read per question, so a settings change applies to the next one.
        self._timeout = timeout
        self._pending: dict[str, PendingApproval] = {}

    def approver(self, address: TurnAddress, *, cancelled: asyncio.Event, show: Show) -> Approver:
        """The approver for one turn; `cancelled` is the turn's cancel event."""

        async def ask(request: ApprovalRequest) -> ApprovalDecision:
            return await self._ask(request, address, cancelled, show)

        return ask

    def pending(self, session_id: str | None = None) -> list[PendingApproval]:
        """Open questions, oldest first (of one session, or all)."""
        return [p for p in self._pending.values() if session_id in (None, p.address.session_id)]

    def get(self, approval_id: str) -> PendingApproval | None:
        return self._pending.get(approval_id)

    def answer(self, approval_id: str, decision: ApprovalDecision, by: str) -> bool:
        """Settle an open question; False when it is unknown or already settled."""
        if decision not in DECISIONS:
            raise ValueError(f"decision must be one of {', '.join(DECISIONS)}")
        pending = self._pending.get(approval_id)
        if pending is None or pending.answer.done():
            return False
        pending.answer.set_result((decision, by))
        return True

    async def _ask(
        self,
        request: ApprovalRequest,
        address: TurnAddress,
        cancelled: asyncio.Event,
        show: Show,
    ) -> ApprovalDecision:
        started = time.monotonic()
        approval_id = uuid.uuid4().hex[:16]
        if address.unattended:
            self._settle(show, request, address, approval_id, "deny", "unattended", "", started)
            return "deny"
        if await self.rules.allows(address.agent, request.tool, request.key):
            self._record(request, address, approval_id, "always", "remembered", "", started)
            return "always"
        timeout = self._timeout()
        asked = ApprovalAsked(
            approval_id,
            request.tool,
            request.summary,
            request.reason,
            timeout,
            time.time() + timeout,
            address.channel,
            address.chat_id,
        )
        pending = self._pending[approval_id] = PendingApproval(asked, address, request.key)
        decision: ApprovalDecision = "deny"
        outcome: ApprovalOutcome = "cancelled"
        by = ""
        try:
            show(asked)
            decision, by, outcome = await _wait(pending, cancelled, timeout)
            if decision == "always":
                await self.rules.allow(
                    address.agent, request.tool, request.key, summary=request.summary, allowed_by=by
                )
        finally:  # a cancelled task too: the card must go and the decision be audited
            del self._pending[approval_id]
            self._settle(show, request, address, approval_id, decision, outcome, by, started)
        return decision

    def _settle(
        self,
        show: Show,
        request: ApprovalRequest,
        address: TurnAddress,
        approval_id: str,
        decision: ApprovalDecision,
        outcome: ApprovalOutcome,
        by: str,
        started: float,
    ) -> None:
        settled = ApprovalSettled(approval_id, request.tool, request.summary, decision, outcome, by)
        try:
            show(settled)
        except Exception:  # an audience that went away must not lose the audit record
            log.exception("announcing approval %s failed", approval_id)
        self._record(request, address, approval_id, decision, outcome, by, started)

    def _record(
        self,
        request: ApprovalRequest,
        address: TurnAddress,
        approval_id: str,
        decision: ApprovalDecision,
        outcome: str,
        by: str,
        started: float,
    ) -> None:
        self._audit.write(
            {
                "type": "approval",
                "approval_id": approval_id,
                "session_id": address.session_id,
                "agent": address.agent,
                "channel": address.channel,
                "chat_id": address.chat_id,
                "tool": request.tool,
                "summary": request.summary,
                "key": request.key,
                "reason": request.reason,
                "decision": decision,
                "outcome": outcome,
                "answered_by": by,
                "waited_ms": round((time.monotonic() - started) * 1000, 1),
            }
        )
        log.info(
            "approval %s for %s in session %s: %s (%s%s)",
            approval_id,
            request.tool,
            address.session_id,
            decision,
            outcome,
            f" by {by}" if by else "",
        )


async def _wait(
    pending: PendingApproval, cancelled: asyncio.Event, limit: float
) -> tuple[ApprovalDecision, str, ApprovalOutcome]:
    """The user's answer, or a deny when the turn is cancelled or the time is up."""
    stop = asyncio.ensure_future(cancelled.wait())
    try:
        done, _ = await asyncio.wait(
            {pending.answer, stop}, timeout=limit, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        stop.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await stop
    if pending.answer in done:
        decision, by = pending.answer.result()
        return decision, by, "answered"
    if stop in done:
        return "deny", "", "cancelled"
    return "deny", "", "timeout"
