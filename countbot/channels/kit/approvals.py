"""Approval questions in a chat, the same for every platform: a message with three buttons,
edited to show the decision, and the answers its buttons send back.

The question comes through the session's event stream (`SessionFeed` posts and edits the card);
the answer comes from the platform as button data (`ApprovalAnswers`), accepted only from an
owner (a sender listed or paired, not one only `allow_from: ["*"]` lets in), and only in the chat
the question was put to.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from countbot.channels.kit.access import AccessControl
from countbot.runtime.approvals import DECISIONS, ApprovalAsked, ApprovalBroker, ApprovalSettled
from countbot.store.pairing import SenderInfo
from countbot.tools.approval import ApprovalDecision

log = logging.getLogger(__name__)

# Button data is "approval:<id>:<decision>", well under Telegram's 64-byte limit.
PREFIX = "approval"
LABELS: dict[ApprovalDecision, str] = {
    "once": "✅ Approve once",
    "always": "♾ Always allow this command",
    "deny": "⛔ Deny",
}
_SUMMARY_CHARS = 1500


@dataclass(frozen=True, slots=True)
class Button:
    label: str
    data: str


def question_text(asked: ApprovalAsked) -> str:
    """The card's Markdown: what would run, why it needs a yes, and for how long it waits."""
    return (
        f"**Approval needed: {asked.tool}**\n"
        f"```\n{_clip(asked.summary)}\n```\n"
        f"Why: {asked.reason}.\n"
        f"No answer within {asked.timeout:g} s means deny."
    )


def buttons(asked: ApprovalAsked) -> tuple[Button, ...]:
    return tuple(Button(LABELS[d], f"{PREFIX}:{asked.id}:{d}") for d in DECISIONS)


def settled_text(settled: ApprovalSettled) -> str:
    """The card after the decision (its buttons gone)."""
    verdict = {
        "once": "✅ Approved once",
        "always": "♾ Always allowed",
        "deny": "⛔ Denied",
    }[settled.decision]
    how = {
        "answered": f" by {settled.by}" if settled.by else "",
        "timeout": " (no answer in time)",
        "cancelled": " (the turn was stopped)",
        "unattended": " (nobody could answer)",
    }[settled.outcome]
    return f"{verdict}{how}: {settled.tool}\n```\n{_clip(settled.summary)}\n```"


def parse_button(data: str) -> tuple[str, ApprovalDecision] | None:
    """(approval id, decision) from a button's data; None when it is not an approval button."""
    prefix, _, rest = data.partition(":")
    approval_id, _, decision = rest.rpartition(":")
    if prefix != PREFIX or not approval_id or decision not in DECISIONS:
        return None
    return approval_id, decision  # type: ignore[return-value]


class ApprovalAnswers:
    """Takes a pressed button to the broker; returns the short text the platform shows."""

    def __init__(self, channel: str, broker: ApprovalBroker | None, access: AccessControl) -> None:
        self._channel = channel
        self._broker = broker
        self._access = access

    async def press(self, data: str, sender: SenderInfo, chat_id: str) -> str:
        parsed = parse_button(data)
        if parsed is None or self._broker is None:
            return "This button does nothing any more."
        approval_id, decision = parsed
        # Not whoever the open door lets in: the stranger who steered the turn would say yes.
        if not await self._access.owns(sender):
            log.warning("%s: %s may not answer approvals", self._channel, sender.describe())
            return "Only the owner of this assistant can answer."
        pending = self._broker.get(approval_id)
        address = pending.address if pending is not None else None
        if address is None or (address.channel, address.chat_id) != (self._channel, chat_id):
            return "This question was already answered or has expired."
        by = f"{self._channel}:{sender.sender_id}"
        if not self._broker.answer(approval_id, decision, by):
            return "This question was already answered or has expired."
        return {"once": "Approved once", "always": "Always allowed", "deny": "Denied"}[decision]


def _clip(text: str) -> str:
    text = text.replace("```", "`\u200b``")  # a fence inside the command must not end the block
    return text if len(text) <= _SUMMARY_CHARS else text[:_SUMMARY_CHARS] + " …"
