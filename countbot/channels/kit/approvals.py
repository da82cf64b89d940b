"""Approval questions in a chat, the same for every platform: a message with three buttons,
edited to show the decision, and the answers its buttons send back. A chat without buttons gets
the question as text with a short code and answers by replying `/approve CODE`, `/always CODE`
or `/deny CODE`.

The question comes through the session's event stream (`SessionFeed` posts and edits the card);
the answer comes from the platform as button data or a typed reply (`ApprovalAnswers`), accepted
only from an owner (a sender listed or paired, not one only `allow_from: ["*"]` lets in), and
only in the chat the question was put to.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from countbot.channels.kit.access import AccessControl
from countbot.channels.kit.commands import command_word
from countbot.runtime.approvals import (
    DECISIONS,
    ApprovalAsked,
    ApprovalBroker,
    ApprovalSettled,
    PendingApproval,
)
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
# The typed answers, as chat commands: `/approve 3f9a2c`.
REPLY_WORDS: dict[str, ApprovalDecision] = {"approve": "once", "always": "always", "deny": "deny"}
# How much of the question's id the user types: unique enough among one chat's open questions.
CODE_CHARS = 6
_GONE = "This question was already answered or has expired."


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


def typed_question_text(asked: ApprovalAsked) -> str:
    """The card for a chat without buttons: the question and how to answer it by replying."""
    code = asked.id[:CODE_CHARS]
    return (
        f"{question_text(asked)}\n"
        f"Reply `/approve {code}` to run it once, `/always {code}` to always allow this "
        f"command, or `/deny {code}`."
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


def parse_approval_reply(text: str) -> tuple[str, str] | None:
    """(word, code) of a typed answer (`/approve 3f9a2c`, `/deny`), else None."""
    name, argument = command_word(text)
    if name not in REPLY_WORDS:
        return None
    return name, (argument.split(maxsplit=1) or [""])[0]


def parse_button(data: str) -> tuple[str, ApprovalDecision] | None:
    """(approval id, decision) from a button's data; None when it is not an approval button."""
    prefix, _, rest = data.partition(":")
    approval_id, _, decision = rest.rpartition(":")
    if prefix != PREFIX or not approval_id or decision not in DECISIONS:
        return None
    return approval_id, decision  # type: ignore[return-value]


class ApprovalAnswers:
    """Takes a pressed button or a typed reply to the broker; returns the short text the platform
    shows the sender."""

    def __init__(self, channel: str, broker: ApprovalBroker | None, access: AccessControl) -> None:
        self._channel = channel
        self._broker = broker
        self._access = access

    async def press(self, data: str, sender: SenderInfo, chat_id: str) -> str:
        parsed = parse_button(data)
        if parsed is None or self._broker is None:
            return "This button does nothing any more."
        return await self._refused(sender) or await self._settle(*parsed, sender, chat_id)

    async def reply(self, word: str, code: str, sender: SenderInfo, chat_id: str) -> str:
        """A typed answer (`word` one of `REPLY_WORDS`, `code` the question's short code; empty
        when only one question is open in the chat)."""
        refused = await self._refused(sender)
        if refused:
            return refused
        open_here = [p.asked.id for p in self._pending_in(chat_id)]
        matching = [i for i in open_here if code and i.startswith(code.lower())]
        if not code and len(open_here) == 1:
            matching = open_here
        if len(matching) != 1:
            return _GONE if code or not open_here else "Which one? Reply with its code."
        return await self._settle(matching[0], REPLY_WORDS[word], sender, chat_id)

    async def _refused(self, sender: SenderInfo) -> str:
        """Why `sender` may not answer (empty: an owner may)."""
        # Not whoever the open door lets in: the stranger who steered the turn would say yes.
        if await self._access.owns(sender):
            return ""
        log.warning("%s: %s may not answer approvals", self._channel, sender.describe())
        return "Only the owner of this assistant can answer."

    async def _settle(
        self, approval_id: str, decision: ApprovalDecision, sender: SenderInfo, chat_id: str
    ) -> str:
        if self._broker is None or approval_id not in self._pending_ids(chat_id):
            return _GONE
        by = f"{self._channel}:{sender.sender_id}"
        if not self._broker.answer(approval_id, decision, by):
            return _GONE
        return {"once": "Approved once", "always": "Always allowed", "deny": "Denied"}[decision]

    def _pending_in(self, chat_id: str) -> list[PendingApproval]:
        """The questions put to this chat that still wait for an answer."""
        if self._broker is None:
            return []
        here = (self._channel, chat_id)
        return [p for p in self._broker.pending() if (p.address.channel, p.address.chat_id) == here]

    def _pending_ids(self, chat_id: str) -> set[str]:
        return {p.asked.id for p in self._pending_in(chat_id)}


def _clip(text: str) -> str:
    text = text.replace("```", "`\u200b``")  # a fence inside the command must not end the block
    return text if len(text) <= _SUMMARY_CHARS else text[:_SUMMARY_CHARS] + " …"
