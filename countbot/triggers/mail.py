"""Watched mailboxes: each new mail starts a turn with its sender, subject and text as data.

The IMAP side is the email channel's (`channels/email/mailbox.py`: imaplib in worker threads,
IDLE where the server offers it, else a look every `poll_interval`), and so are the mail's
parsing and the sender check (`mail_in.py`, `trust.py`); the chat channel itself is untouched.
The mailbox is the owner's, so nothing on the server changes: mail is read with `BODY.PEEK` and
never marked seen. New means unseen with a UID above the mailbox's cursor (`channel_cursors`,
as `trigger:<name>`): the event is recorded first, then the cursor moves past its UID, so a
restart neither loses a mail nor runs one twice (the ledger's key is the UID). Mail already
there when the mailbox is first watched is not news. A broken connection is retried with
backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from countbot.channels.email.mail_in import body_text, parse_mail, sender_of
from countbot.channels.email.mailbox import Mailbox, MailboxError
from countbot.channels.email.trust import vouched
from countbot.config.settings import MailboxSettings
from countbot.store.channel_state import ChannelStateStore
from countbot.triggers.dispatcher import Dispatcher
from countbot.triggers.events import TriggerEvent, TriggerEvents

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 30.0
RETRY_FIRST, RETRY_MOST = 5.0, 300.0
# How much of a mail's text is kept in its event (the turn reads at most the payload's inline).
MAX_TEXT = 100_000


def _cursor_name(trigger: str) -> str:
    return f"trigger:{trigger}"


class MailboxTrigger:
    """Watches one mailbox for its trigger (see the module docstring)."""

    def __init__(
        self,
        name: str,
        settings: MailboxSettings,
        events: TriggerEvents,
        cursors: ChannelStateStore,
        dispatcher: Dispatcher,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name = name
        self._settings = settings
        self._events = events
        self._cursors = cursors
        self._dispatcher = dispatcher
        self._clock = clock
        self._mailbox: Mailbox | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"mailbox:{self.name}")

    async def stop(self) -> None:
        self._stopping = True  # what the closed connection raises now is no failure
        if self._mailbox is not None:
            await asyncio.to_thread(self._mailbox.close)  # wakes the thread waiting in IDLE
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        pause = RETRY_FIRST
        while True:
            try:
                await self._watch()
            except MailboxError as exc:
                log.warning("mailbox trigger %s: %s; again in %.0f s", self.name, exc, pause)
            except Exception:
                if self._stopping:
                    return
                log.exception("mailbox trigger %s failed; again in %.0f s", self.name, pause)
            finally:
                if self._mailbox is not None:
                    await asyncio.to_thread(self._mailbox.close)
                    self._mailbox = None
            await asyncio.sleep(pause)
            pause = min(pause * 2, RETRY_MOST)

    async def _watch(self) -> None:
        settings = self._settings
        self._mailbox = mailbox = await asyncio.to_thread(
            Mailbox, settings.imap_host, settings.imap_port, settings.imap_security, CONNECT_TIMEOUT
        )
        user = settings.username or settings.address
        await asyncio.to_thread(
            mailbox.open, user, settings.password.get_secret_value(), settings.mailbox
        )
        cursor = await self._cursors.cursor(_cursor_name(self.name))
        if cursor == 0:  # first watched: what is there is no news
            cursor = max((int(uid) for uid in await asyncio.to_thread(mailbox.unseen)), default=0)
            await self._cursors.advance(_cursor_name(self.name), cursor + 1)
        while True:
            await self._take_new(mailbox)
            if mailbox.can_idle:
                await asyncio.to_thread(mailbox.idle, settings.poll_interval)
            else:
                await asyncio.sleep(settings.poll_interval)

    async def _take_new(self, mailbox: Mailbox) -> None:
        """Record each unseen mail above the cursor, oldest first, and move the cursor past it."""
        cursor = await self._cursors.cursor(_cursor_name(self.name))
        for uid in sorted(int(uid) for uid in await asyncio.to_thread(mailbox.unseen)):
            if uid < cursor:
                continue
            raw = await asyncio.to_thread(mailbox.fetch, str(uid).encode())
            if raw is not None:
                payload = await asyncio.to_thread(_payload, raw, self._settings.authserv_id)
                now = self._clock()
                recorded = await self._events.record(
                    self.name, "mailbox", f"uid:{uid}", payload, now
                )
                if recorded.new:
                    self._dispatcher.received(recorded.id, self.name, now)
            await self._cursors.advance(_cursor_name(self.name), uid + 1)


def _payload(raw: bytes, authserv_id: str | None) -> dict[str, Any]:
    """What the turn needs of a mail (parsed in a worker thread: mail can be large)."""
    message = parse_mail(raw)
    sender = sender_of(message)
    return {
        "from": sender or str(message.get("From") or "(no single sender)"),
        "vouched": sender is not None and vouched(message, sender, authserv_id),
        "subject": str(message.get("Subject") or ""),
        "date": str(message.get("Date") or ""),
        "attachments": [part.get_filename() or "unnamed" for part in message.iter_attachments()],
        "text": body_text(message)[:MAX_TEXT],
    }


async def describe_mail(event: TriggerEvent) -> tuple[str, str]:
    """A mail as its turn reads it: who sent it (and whether that is proven), subject, text."""
    mail = event.payload
    proof = (
        "the receiving server vouched for this sender"
        if mail["vouched"]
        else "NOT vouched for by the receiving server: the From address may be forged"
    )
    attached = f"; attachments: {', '.join(mail['attachments'])}" if mail["attachments"] else ""
    heading = (
        f"Mail in watched mailbox {event.trigger!r} from {mail['from']} ({proof}); "
        f"subject {mail['subject']!r}; date {mail['date']}{attached}. Its text:"
    )
    return heading, str(mail["text"])
