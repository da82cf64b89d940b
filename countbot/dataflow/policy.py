"""The outbound policy: the tool registry's gate that asks before data leaves on a stranger's say.

Before untrusted content enters a turn, nothing is asked: the model acts on the user's words
only. After it (a fetched page, search results, an MCP result, a marked memory note), an
outbound call (`Tool.egress`) runs without a question only when its destination is one the
owner named and it carries no private value that did not come from that destination:

- url: a host the user's messages name, or a link that appears in the untrusted text itself;
- search: the configured search service; the words of the user's request may go there;
- chat: the chat the turn came from takes anything; another of the owner's chats (the `message`
  tool refuses all others) takes what carries no private value;
- mcp (a tool not marked read-only) and exec (its sandbox has network): always asked, since the
  real destination is in the server's or the command's hands;
- standing (writing AGENTS.md, USER.md, HEARTBEAT.md, MEMORY.md or a skill): always asked, since
  later turns would follow the stranger's words as the user's (memory_write is marked instead).

Everything else needs the user's yes through the turn's approver (`security.outbound: ask`), is
refused (`deny`), or is let through (`off`). Every decision is written to the audit log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from countbot.common.authorship import Messages
from countbot.dataflow.ledger import TurnLedger
from countbot.dataflow.marks import mark_arguments, marked_sources
from countbot.dataflow.matching import Hit, normalize
from countbot.tools.approval import ApprovalRequest
from countbot.tools.base import Egress, Tool, ToolContext, ToolResult

log = logging.getLogger(__name__)

OutboundMode = Literal["ask", "deny", "off"]
Decision = Literal["allowed", "approved", "refused"]
_SUMMARY_CHARS = 400


@dataclass(frozen=True, slots=True)
class EarlierResult:
    """A tool result of an earlier turn still in the model's context, with its call."""

    tool: str
    arguments: dict[str, Any]
    content: str
    # Who wrote text in it that is not the owner's, as the tool said (`ToolResult.untrusted`).
    untrusted: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TurnInputs:
    """What the model's context held before this turn's tools ran: the user's words, other
    private text, text others wrote, and earlier turns' tool results."""

    owner_words: Sequence[str]
    request: str
    private: Sequence[tuple[str, str]] = ()
    untrusted: Sequence[tuple[str, str]] = ()
    results: Sequence[EarlierResult] = ()


class TurnSeed(Protocol):
    """Reads a turn's inputs (the runtime's view of the session, USER.md and the secrets)."""

    async def __call__(self, ctx: ToolContext, *, secrets: bool = True) -> TurnInputs:
        """The inputs; without `secrets` when only what is untrusted among them is asked."""
        ...


@dataclass(frozen=True, slots=True)
class Verdict:
    """Why a call needs a yes (empty: it does not), and what private data it carries."""

    reasons: tuple[str, ...]
    carries: tuple[str, ...] = ()


class OutboundPolicy:
    """Implements the registry's `ToolGate`; see the module docstring."""

    def __init__(
        self,
        mode: Callable[[], OutboundMode],
        seed: TurnSeed,
        audit: Callable[[dict[str, Any]], None],
        tools: Callable[[str], Tool | None] = lambda name: None,
    ) -> None:
        # Read per call, so a settings change applies at once.
        self._mode = mode
        self._seed = seed
        self._audit = audit
        # The tools by name, to know what earlier turns' results brought.
        self._tools = tools

    async def admit(
        self, tool: Tool, args: dict[str, Any], ctx: ToolContext
    ) -> dict[str, Any] | ToolResult:
        egress = await tool.egress(args, ctx)
        if egress is None and not tool.remembers:
            return args
        ledger = await self._ledger(ctx)
        if tool.remembers and ledger.tainted:
            args = mark_arguments(args, tool.remembers, ledger.untrusted)
        if egress is None:
            return args
        if egress.refused is not None:
            self._record(tool, egress, ctx, ledger, "refused", egress.refused)
            return args  # the tool refuses it itself, with its own words to the model
        mode = self._mode()
        if mode == "off" or not ledger.tainted:
            why = "security.outbound is off" if mode == "off" else "no untrusted content yet"
            self._record(tool, egress, ctx, ledger, "allowed", why)
            return args
        verdict = await judge(egress, ledger, ctx)
        if not verdict.reasons:
            self._record(tool, egress, ctx, ledger, "allowed", "named destination, nothing private")
            return args
        why = "; ".join(verdict.reasons)
        if mode == "ask" and await self._asked(tool, egress, verdict, ledger, ctx):
            self._record(tool, egress, ctx, ledger, "approved", why, verdict.carries)
            return args
        self._record(tool, egress, ctx, ledger, "refused", why, verdict.carries)
        return ToolResult.error(
            f"not sent to {egress.destination}: {why}, after this turn read untrusted content "
            f"({', '.join(ledger.untrusted[:3])}), and the user did not allow it. Do not try to "
            "send it another way; tell the user what you wanted to send and where."
        )

    async def observe(
        self, tool: Tool, args: dict[str, Any], result: ToolResult, ctx: ToolContext
    ) -> None:
        await _take(_turn_ledger(ctx), tool, args, result.content, ctx, "", result.untrusted)

    async def untrusted_read(self, ctx: ToolContext) -> tuple[str, ...]:
        """The turn's untrusted sources: its results so far and its inputs (history, parts,
        steered messages). When no call has read the inputs yet (a turn that sent nothing),
        they are read into a ledger of their own without the secrets, which hold nothing
        untrusted: a later call still reads them in full into the turn's."""
        ledger = _turn_ledger(ctx)
        if ledger.seeding is not None:
            return tuple((await self._ledger(ctx)).untrusted)
        inputs = TurnLedger(untrusted=list(ledger.untrusted), steered=len(ctx.steered))
        await self._read_inputs(inputs, ctx, secrets=False)
        return tuple(inputs.untrusted)

    async def _ledger(self, ctx: ToolContext) -> TurnLedger:
        """The turn's ledger, its inputs read once (concurrent calls await the same read)."""
        ledger = _turn_ledger(ctx)
        if ledger.seeding is None:
            ledger.steered = len(ctx.steered)  # those are in the history the seed reads
            ledger.seeding = asyncio.ensure_future(self._read_inputs(ledger, ctx))
        await asyncio.shield(ledger.seeding)
        if ledger.steered < len(ctx.steered):  # messages steered in since
            messages = Messages()
            messages.add_all(ctx.steered[ledger.steered :])
            ledger.steered = len(ctx.steered)
            ledger.request += "".join("\0" + normalize(text) for text in messages.owner)
            _add_messages(ledger, messages.owner, messages.private, messages.untrusted)
        return ledger

    async def _read_inputs(
        self, ledger: TurnLedger, ctx: ToolContext, *, secrets: bool = True
    ) -> None:
        try:
            inputs = await self._seed(ctx, secrets=secrets)
        except Exception:  # unknown inputs: every outbound call asks (fail closed)
            log.exception("reading the inputs of a turn in session %s failed", ctx.session_id)
            ledger.too_much = True
            ledger.add_untrusted("inputs that could not be read", "context", "")
            return
        ledger.request = normalize(inputs.request)
        _add_messages(ledger, inputs.owner_words, inputs.private, inputs.untrusted)
        for earlier in inputs.results:
            tool = self._tools(earlier.tool)
            if tool is None:  # a tool gone since (an MCP server removed): count it a stranger's
                ledger.add_untrusted(f"{earlier.tool} earlier", earlier.tool, earlier.content)
            else:
                args, content = earlier.arguments, earlier.content
                await _take(ledger, tool, args, content, ctx, " earlier", earlier.untrusted)

    async def _asked(
        self, tool: Tool, egress: Egress, verdict: Verdict, ledger: TurnLedger, ctx: ToolContext
    ) -> bool:
        if ctx.approver is None:
            return False
        key = egress.payload if egress.kind == "exec" else egress.destination
        verb = "Change" if egress.kind == "standing" else "Send to"
        request = ApprovalRequest(
            tool=tool.name,
            summary=f"{verb} {egress.destination}: {egress.payload}"[:_SUMMARY_CHARS],
            reason=(
                f"{'; '.join(verdict.reasons)}. This conversation read untrusted content "
                f"({', '.join(ledger.untrusted[:3])}) that may be steering the assistant."
            ),
            key=f"outbound {egress.kind} {key}",
        )
        return await ctx.approver(request) != "deny"

    def _record(
        self,
        tool: Tool,
        egress: Egress,
        ctx: ToolContext,
        ledger: TurnLedger,
        decision: Decision,
        why: str,
        carries: Sequence[str] = (),
    ) -> None:
        record = {
            "type": "outbound",
            "session_id": ctx.session_id,
            "channel": ctx.channel,
            "tool": tool.name,
            "kind": egress.kind,
            "destination": egress.destination,
            "decision": decision,
            "why": why,
            "untrusted": list(ledger.untrusted),
            "carries": list(carries),
        }
        try:
            self._audit(record)
        except Exception:  # the audit must never take a tool call down with it
            log.exception("auditing an outbound decision failed")


def explain_policy(mode: OutboundMode, exec_network: bool) -> str:
    """The policy in a user's words, for `countbot doctor --security`."""
    if mode == "off":
        return (
            "security.outbound: off: once the assistant has read a page, a mail or a stranger's "
            "message, that text can make it send your data anywhere without asking"
        )
    verb = "asks you first" if mode == "ask" else "is refused"
    detail = (
        f"security.outbound: {mode}: after a turn read untrusted text (web pages, search "
        "results, MCP results, workspace skills, chat messages and mails others wrote or you "
        "forwarded, notes and summaries saved from them), sending to a place you did "
        f"not name, or sending your private data (your messages, files and memory it read, "
        f"USER.md, secrets), {verb}; links in a page, searching with your words and answering "
        "your chat never ask; `message` reaches only your own chats"
    )
    if exec_network:
        detail += "; exec with network also asks then (tools.exec.network: false avoids it)"
    return detail


async def judge(egress: Egress, ledger: TurnLedger, ctx: ToolContext) -> Verdict:
    """Why `egress` needs the user's yes in a turn that read untrusted content."""
    if egress.kind == "chat" and egress.destination == f"{ctx.channel}:{ctx.chat_id}":
        return Verdict(())
    reasons = []
    if ledger.too_much:
        reasons.append("this conversation holds more private text than can be checked")
    if egress.opaque:
        reasons.append(_OPAQUE[egress.kind])
    elif not _named(egress, ledger):
        reasons.append(f"you did not name {egress.destination}")
    hits = [hit for hit in await ledger.find(egress.payload) if not _excused(hit, egress, ledger)]
    carries = tuple(dict.fromkeys(hit.source for hit in hits))
    if carries:
        reasons.append(f"it carries private data (from {', '.join(carries)})")
    return Verdict(tuple(reasons), carries)


_OPAQUE = {
    "exec": "a command in a sandbox with network can send anything anywhere",
    "chat": "what it sends cannot be checked now (files, a job's later answers)",
    "mcp": "the server decides where its arguments go",
    "url": "what it sends cannot be checked",
    "search": "what it sends cannot be checked",
    "standing": "later turns follow this file as your own instructions",
}


def _named(egress: Egress, ledger: TurnLedger) -> bool:
    """Search and chats are named by configuration (the message tool refuses other chats)."""
    if egress.kind != "url":
        return True
    return egress.destination in ledger.owner_hosts or ledger.is_link(egress.payload)


def _excused(hit: Hit, egress: Egress, ledger: TurnLedger) -> bool:
    """A value the destination already had: in its own pages or the URL the user gave for it."""
    if egress.kind == "search":
        return hit.value in ledger.request
    if egress.kind != "url":
        return False
    host = egress.destination
    return hit.value in ledger.owner_urls.get(host, "") or hit.value in ledger.seen_from(host)


async def _take(
    ledger: TurnLedger,
    tool: Tool,
    args: dict[str, Any],
    content: str,
    ctx: ToolContext,
    when: str,
    untrusted: Sequence[str] = (),
) -> None:
    """Record what a result brought into the model's context (`when`: "" or " earlier";
    `untrusted`: who wrote text in it that is not the owner's, as the tool said)."""
    for source in untrusted:
        ledger.add_untrusted(f"{tool.name}: {source}{when}", tool.name, content)
    brought = await tool.brought(args)
    if brought:
        egress = await tool.egress(args, ctx)
        origin = egress.destination if egress is not None else tool.name
        label = _label(tool, args, egress) + when
        if "untrusted" in brought:
            ledger.add_untrusted(label, origin, content)
        if "private" in brought:
            ledger.add_private(label, content)
    for source in marked_sources(content):
        ledger.add_untrusted(f"a memory note from {source}", "memory", "")


def _add_messages(
    ledger: TurnLedger,
    owner_words: Sequence[str],
    private: Sequence[tuple[str, str]],
    untrusted: Sequence[tuple[str, str]],
) -> None:
    """The user's words, other private text and strangers' text, and the marked notes in them."""
    ledger.add_owner_words(owner_words)
    for source, text in private:
        ledger.add_private(source, text)
    for source, text in untrusted:
        ledger.add_untrusted(source, "context", text)
    for text in [*owner_words, *(text for _, text in private)]:
        for source in marked_sources(text):
            ledger.add_untrusted(f"a memory note from {source}", "memory", "")


def _turn_ledger(ctx: ToolContext) -> TurnLedger:
    if not isinstance(ctx.gate_state, TurnLedger):
        ctx.gate_state = TurnLedger()
    return ctx.gate_state


def _label(tool: Tool, args: dict[str, Any], egress: Egress | None) -> str:
    if egress is not None and egress.kind != "exec":
        return f"{tool.name} {egress.destination}"
    detail = next((str(args[k]) for k in ("path", "name", "command") if args.get(k)), "")
    return f"{tool.name} {detail[:80]}".strip()
