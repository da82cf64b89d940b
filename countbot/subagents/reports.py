"""Reports: how a subagent's ending reaches the session that spawned it.

The report enters the parent session through the gateway as a follow-up message, so the
assistant answers it in a new turn on the parent's surface (a busy parent finishes its turn
first). A parent that is itself a running subagent reads it before its next model call; one that
has ended passes it on to its own parent, so a report always reaches someone. When no chat shows
the parent session, the report turn's answer is sent to the parent's chat on the delivery path.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace

from countbot.agent.events import TurnDone
from countbot.common.authorship import Author
from countbot.gateway.follow import TurnFollower
from countbot.gateway.gateway import Gateway, GatewayClosedError
from countbot.gateway.messages import InboundMessage
from countbot.gateway.steering import SteeringBox
from countbot.gateway.watchers import Watcher
from countbot.runtime.deliveries import DeliveryRouter, DeliveryTarget
from countbot.subagents.store import CHANNEL, SESSION_PREFIX, SubagentRecord, SubagentStore

log = logging.getLogger(__name__)

REPORT_CONTEXT = (
    "[This message is the report of subagent {id} that you spawned earlier. Tell the user what "
    "came back.]"
)
_ENDINGS: dict[str, str] = {
    "done": "finished",
    "error": "failed",
    "timeout": "ran out of time",
    "cancelled": "was cancelled",
    "interrupted": "was interrupted",
}


class Reports:
    """Delivers subagents' reports; see the module docstring.

    `gateway` is the daemon's (raising while it has not started); `inbox` is the steering box
    of a subagent still running, by its id (None: not running).
    """

    def __init__(
        self,
        store: SubagentStore,
        deliveries: DeliveryRouter,
        gateway: Callable[[], Gateway],
        inbox: Callable[[str], SteeringBox | None],
    ) -> None:
        self._store = store
        self._deliveries = deliveries
        self._gateway = gateway
        self._inbox = inbox
        self._senders: set[asyncio.Task[None]] = set()

    async def report(self, record: SubagentRecord) -> None:
        """Deliver `record`'s report; marked reported once the gateway took it."""
        message = InboundMessage(
            channel=record.channel or CHANNEL,
            content=report_text(record),
            chat_id=record.chat_id,
            sender=record.session_id,
            session_id=record.parent_session,
            mode="followup",
            context=REPORT_CONTEXT.format(id=record.id),
            # Its words are the subagent's (what it read on the way), never the user's.
            author=Author("subagent", record.id),
        )
        if await self.deliver(message):
            await self._store.mark_reported(record.id)

    async def deliver(self, message: InboundMessage) -> bool:
        """Into the parent session as a follow-up that starts a turn (or into a running parent
        subagent's inbox); False if the gateway is closed (the next start delivers it)."""
        target = message.session_id or ""
        if target.startswith(SESSION_PREFIX):
            subagent_id = target.removeprefix(SESSION_PREFIX)
            inbox = self._inbox(subagent_id)
            if inbox is not None:
                inbox.put(message)
                return True
            parent = await self._store.get(subagent_id)
            if parent is not None:
                upward = replace(
                    message,
                    session_id=parent.parent_session,
                    channel=parent.channel or CHANNEL,
                    chat_id=parent.chat_id,
                )
                return await self.deliver(upward)
        gateway = self._gateway()
        unseen = bool(message.chat_id) and gateway.hub.watching(target) == 0
        watcher = Watcher()
        if unseen:
            gateway.hub.subscribe(target, watcher)
        try:
            submission = await gateway.submit(message, origin=watcher if unseen else None)
        except GatewayClosedError:
            gateway.hub.unsubscribe(target, watcher)
            return False
        if unseen:
            follow = self._send_answer(message, watcher, submission.queued)
            task = asyncio.create_task(follow, name=f"subagent-report:{target}")
            self._senders.add(task)
            task.add_done_callback(self._senders.discard)
        return True

    async def _send_answer(self, message: InboundMessage, watcher: Watcher, queued: bool) -> None:
        """No chat shows the parent session (a job's, or a chat before its first message since
        a restart): send the report turn's answer to the parent's chat through the delivery path.
        """
        target = message.session_id or ""
        try:
            event = await TurnFollower(watcher).terminal(queued)
        finally:
            self._gateway().hub.unsubscribe(target, watcher)
        if not isinstance(event, TurnDone) or not event.content.strip():
            return
        assert message.chat_id is not None
        where = DeliveryTarget(message.channel, message.chat_id)
        result = await self._deliveries.deliver(where, event.content)
        if not result.delivered:
            log.info("report answer for %s not sent to %s: %s", target, where, result.detail)

    def close(self) -> None:
        """Stop sending report turns' answers (the daemon stops)."""
        for sender in self._senders:
            sender.cancel()


def report_text(record: SubagentRecord) -> str:
    """The report as the parent session shows it: who, how it ended, and what it produced."""
    ending = _ENDINGS.get(record.status, record.status)
    head = f"Subagent report: {record.label} ({record.id}) {ending}."
    body = record.result.strip() or "(no output)"
    return f"{head}\n\n{body}"
