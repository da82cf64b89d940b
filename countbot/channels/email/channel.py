"""The email channel: the assistant's own mailbox. IMAP (IDLE where offered, else polling) in,
SMTP out; a From address counts only when the receiving server vouched for it.

Everything here is the standard library (imaplib, smtplib, email) run in worker threads, so
the channel needs no extra. A broken IMAP connection ends `run`, and the manager reconnects
with backoff; unread mail waits on the server meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from countbot.channels.door import (
    ChannelCapabilities,
    ChannelKit,
    ChannelSettings,
    EmailSettings,
    PlatformChannel,
)
from countbot.channels.email.mail_in import Thread, parse_mail, to_incoming
from countbot.channels.email.mailbox import Mailbox
from countbot.channels.email.output import MAX_MESSAGE, EmailChat
from countbot.channels.email.postman import Postman

log = logging.getLogger(__name__)

# Threads remembered for replies (subject, last mail); the oldest are forgotten first.
MAX_THREADS = 1000
CONNECT_TIMEOUT = 30.0


class EmailChannel(PlatformChannel[EmailSettings, Postman]):
    name = "email"
    title = "email"
    refused_by = "The mail server"
    capabilities = ChannelCapabilities(max_message_length=MAX_MESSAGE)
    named_by = "address"

    def __init__(self, kit: ChannelKit) -> None:
        super().__init__(kit)
        self._threads: dict[str, Thread] = {}

    @staticmethod
    def problem(settings: ChannelSettings, where: str) -> str | None:
        if not isinstance(settings, EmailSettings) or not settings.address:
            return f"{where}.address is not set (the assistant's own mail address)"
        if not settings.imap_host or not settings.smtp_host:
            return f"{where}.imap_host and smtp_host must both be set"
        if settings.password is None:
            return f"{where}.password is not set"
        return None

    def chat(self, chat_id: str) -> EmailChat:
        return EmailChat(self.link, chat_id, self._threads)

    async def run(self, started: Callable[[], None]) -> None:
        settings = self.settings
        assert settings.address and settings.imap_host and settings.smtp_host
        assert settings.password is not None
        user = settings.username or settings.address
        password = settings.password.get_secret_value()
        mailbox = await asyncio.to_thread(
            Mailbox, settings.imap_host, settings.imap_port, settings.imap_security, CONNECT_TIMEOUT
        )
        # Shutting the socket wakes the worker thread waiting in IDLE.
        self.close_with(lambda: asyncio.to_thread(mailbox.close))
        try:
            await asyncio.to_thread(mailbox.open, user, password, settings.mailbox)
            postman = Postman(
                settings.smtp_host,
                settings.smtp_port,
                settings.smtp_security,
                settings.address,
                user,
                password,
            )
            with self.connected(postman, "ok (IDLE)" if mailbox.can_idle else "ok (polling)"):
                started()
                await self._serve(mailbox, settings.poll_interval)
        finally:
            await asyncio.to_thread(mailbox.close)

    async def _serve(self, mailbox: Mailbox, interval: float) -> None:
        """Handle unread mail, then wait for more (IDLE where offered); until cancelled."""
        while True:
            for uid in await asyncio.to_thread(mailbox.unseen):
                raw = await asyncio.to_thread(mailbox.fetch, uid)
                if raw is not None:
                    await self._take_safely(raw)
                await asyncio.to_thread(mailbox.mark_seen, uid)
            if mailbox.can_idle:
                await asyncio.to_thread(mailbox.idle, interval)
            else:
                await asyncio.sleep(interval)

    async def _take_safely(self, raw: bytes) -> None:
        """A mail that cannot be handled is logged and left (read) on the server: one odd mail
        must not stop the channel by failing again after every reconnect."""
        try:
            await self._take(raw)
        except Exception:
            log.exception("email: a mail could not be handled; it stays in the mailbox")

    async def _take(self, raw: bytes) -> None:
        settings = self.settings
        message = await asyncio.to_thread(parse_mail, raw)
        assert settings.address
        found = to_incoming(
            message, settings.address, settings.authserv_id, settings.require_authentication
        )
        if found is None:
            return
        incoming, thread = found
        self._threads[incoming.chat_id] = thread
        while len(self._threads) > MAX_THREADS:
            del self._threads[next(iter(self._threads))]
        await self.take(incoming)
