"""One subagent's turn: its loop run under the watchdog, its events shown live, how it ended."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from countbot.agent.cancel import CancelToken
from countbot.agent.events import TurnCancelled, TurnDone, TurnError
from countbot.agent.turn_request import TurnRequest
from countbot.gateway.gateway import KILL_GRACE
from countbot.gateway.steering import SteeringBox
from countbot.gateway.watchdog import DEADLINE_REASON, supervise
from countbot.gateway.watchers import EventHub
from countbot.subagents.store import CHANNEL, SubagentRecord, SubagentStatus

if TYPE_CHECKING:  # the turn machinery: built at the daemon's first turn
    from countbot.agent.loop import AgentLoop

# How a subagent ended, and its answer or why it has none.
Outcome = tuple[SubagentStatus, str]
NO_ANSWER: Outcome = ("error", "it ended without an answer")


async def run_subagent(
    loop: AgentLoop,
    record: SubagentRecord,
    token: CancelToken,
    steering: SteeringBox,
    hub: EventHub,
    limit: float,
) -> Outcome:
    """Run `record`'s task on `loop` for at most `limit` seconds (then stopped by the token, and
    by cancelling its task the gateway's `KILL_GRACE` later); raises what broke the loop itself."""
    work = asyncio.create_task(_stream(loop, record, token, steering, hub))
    verdict = await supervise(work, token, limit, KILL_GRACE)
    if verdict != "finished" or token.reason == DEADLINE_REASON:
        return ("timeout", f"it took longer than {limit:g} s and was stopped")
    return NO_ANSWER if work.cancelled() else work.result()


async def _stream(
    loop: AgentLoop,
    record: SubagentRecord,
    token: CancelToken,
    steering: SteeringBox,
    hub: EventHub,
) -> Outcome:
    outcome = NO_ANSWER
    request = TurnRequest(
        record.task,
        record.session_id,
        channel=CHANNEL,
        cancel_token=token,
        unattended=True,
        steering=steering,
    )
    events = loop.process_message(request)
    async with contextlib.aclosing(events):
        async for event in events:
            hub.publish(record.session_id, event)  # whoever opened its session sees it live
            if isinstance(event, TurnDone):
                outcome = ("done", event.content)
            elif isinstance(event, TurnError):
                outcome = ("error", event.error)
            elif isinstance(event, TurnCancelled):
                outcome = ("cancelled", f"it was {token.reason or 'cancelled'}")
    return outcome
