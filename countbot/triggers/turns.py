"""One trigger event's turn: submitted to the gateway in the trigger's session, followed to its end.

The gateway gives it the session lane (a trigger's events run one after another), the full agent
loop and live events (the trigger's session streams in the web UI like any chat); its watchdog
always ends the turn with one terminal event, so following it needs no deadline of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from countbot.agent.events import TurnDone, TurnError, TurnNotice
from countbot.agent.notices import with_notices
from countbot.common.authorship import JOB
from countbot.gateway.events import GatewayEvent
from countbot.gateway.follow import TurnFollower
from countbot.gateway.gateway import Gateway
from countbot.gateway.messages import InboundMessage
from countbot.gateway.watchers import Watcher
from countbot.triggers.payload import TurnInput

# What the turns' messages name as their channel (their chat is the trigger's name).
CHANNEL = "trigger"


@dataclass(frozen=True, slots=True)
class TriggerOutcome:
    """How the turn ended: its answer (with the notices a chat would show), or why not."""

    ok: bool
    text: str = ""
    error: str = ""


def session_of(trigger: str) -> str:
    """Each trigger talks in a session of its own: its budget, its history, its page."""
    return f"trigger:{trigger}"


async def run_turn(
    gateway: Gateway, trigger: str, given: TurnInput, tools: frozenset[str]
) -> TriggerOutcome:
    """Run the turn unattended with only `tools`; its answer or its failure."""
    session_id = session_of(trigger)
    watcher = Watcher()
    gateway.hub.subscribe(session_id, watcher)
    shown: list[TurnNotice] = []

    def note(event: GatewayEvent) -> None:
        if isinstance(event, TurnNotice):
            shown.append(event)

    try:
        inbound = InboundMessage(
            channel=CHANNEL,
            content=given.message,
            chat_id=trigger,
            session_id=session_id,
            mode="followup",
            unattended=True,
            context=given.context,
            allowed_tools=tools,
            # The prompt is the owner's (config.yaml or the web UI), the payload its sender's.
            author=JOB,
            parts=(given.payload,),
        )
        submission = await gateway.submit(inbound, origin=watcher)
        terminal = await TurnFollower(watcher, note).terminal(submission.queued)
    finally:
        gateway.hub.unsubscribe(session_id, watcher)
    if isinstance(terminal, TurnDone):
        return TriggerOutcome(True, with_notices(terminal.content, shown))
    if isinstance(terminal, TurnError):
        return TriggerOutcome(False, error=terminal.error)
    return TriggerOutcome(False, error="the turn was cancelled")
