"""The notices a turn gives besides its answer: their codes, details and plain English words.

Codes are the protocol (docs/protocol.md); surfaces with their own wording (the web UI) use the
code and `details`, the others show `text`. A surface that delivers a turn as one text (`chat -m`,
cron deliveries, chat channels) appends the lasting notices with `with_notices`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from countbot.agent.events import AgentEvent, TurnCancelled, TurnDone, TurnError, TurnNotice

# What a turn a Stop ended shows as its text.
CANCELLED = "(cancelled)"


def summarizing() -> TurnNotice:
    return TurnNotice(
        "summarizing",
        "Summarizing older messages into memory to make room; this can take a moment.",
        transient=True,
    )


def retrying(attempt: int, cause: str, delay: float, model: str) -> TurnNotice:
    details = {"attempt": attempt, "cause": cause, "delay": round(delay, 1), "model": model}
    text = f"The model call failed ({cause}); retry {attempt} in {delay:.0f} s."
    return TurnNotice("retrying", text, details, transient=True)


def fallback(model: str, cause: str) -> TurnNotice:
    text = f"Answered by the fallback model {model} ({cause})."
    return TurnNotice("fallback", text, {"model": model, "cause": cause})


def truncated(*, continuing: bool, thinking: bool, runaway: bool = False) -> TurnNotice:
    """The answer hit the output limit (continued once automatically, else offered), or a small
    model began repeating itself (`runaway`: stopped there)."""
    details = {"continuing": continuing, "thinking": thinking, "runaway": runaway}
    if runaway:
        text = "The model began repeating itself, so its answer was stopped there."
        return TurnNotice("truncated", text, details)
    cause = (
        "The model spent its whole output limit thinking"
        if thinking
        else "The answer was cut off at the output limit"
    )
    if continuing:
        text = f"{cause}; asking it to continue."
    else:
        text = f"{cause}. Say “continue” for the rest, or raise model.max_tokens."
    return TurnNotice("truncated", text, details, transient=continuing)


def economy(model: str, text: str) -> TurnNotice:
    """Turns switched to the cheaper `model.economy` as a daily budget runs low."""
    return TurnNotice("economy", text, {"model": model})


# Why an answer came without text, by the call's stop reason (an answer cut at the output
# limit has its own notice, `truncated`, with the offer to continue).
_FILTERED = ("filter", "The provider's content filter stopped the answer.")
_NOTHING = ("nothing", "The model ended its turn without writing an answer.")


def empty_answer(stop_reason: str) -> TurnNotice:
    """The turn ended with no text: why (`reason`: nothing, filter) and the offer to retry
    (the web UI shows a Retry button; other surfaces say how)."""
    reason, cause = _FILTERED if stop_reason == "content_filter" else _NOTHING
    text = f"{cause} Send your message again to retry."
    return TurnNotice("empty_answer", text, {"reason": reason, "retry": True})


def step_limit(steps: int) -> TurnNotice:
    text = (
        f"I stopped after {steps} steps without finishing. "
        "Tell me to continue if you want me to keep going."
    )
    return TurnNotice("step_limit", text, {"steps": steps})


def tool_loop(tool: str, repeats: int) -> TurnNotice:
    text = (
        f"I stopped: the model kept calling {tool} without getting anywhere ({repeats} times). "
        "Rephrasing the request or choosing a stronger model may help."
    )
    return TurnNotice("tool_loop", text, {"tool": tool, "repeats": repeats})


def with_notices(answer: str, notices: Iterable[TurnNotice]) -> str:
    """`answer` with the lasting notices after it, for surfaces that deliver one text."""
    lasting = [n.text for n in notices if not n.transient]
    return "\n\n".join(part for part in (answer.strip(), *lasting) if part)


async def final_text(events: AsyncIterator[AgentEvent], unfinished: str = "") -> str:
    """A turn as one text (`chat -m`): the answer and its lasting notices, "Error: ..." for a
    failure, "(cancelled)" for a Stop; `unfinished` if the events end without a terminal one."""
    final, shown = unfinished, []
    async for event in events:
        if isinstance(event, TurnNotice):
            shown.append(event)
        elif isinstance(event, TurnDone):
            final = with_notices(event.content, shown)
        elif isinstance(event, TurnError):
            final = f"Error: {event.error}"
        elif isinstance(event, TurnCancelled):
            final = CANCELLED
    return final
