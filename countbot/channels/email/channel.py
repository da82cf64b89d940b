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
from typing import Any

from countbot.channels.base import Channel, ChannelCapabilities
from countbot.channels.email.mail_in import Thread, parse, to_incoming
from countbot.channels.email.mailbox import Mailbox
from countbot.channels.email.output import MAX_MESSAGE, EmailChat, EmailSender, PostmanLink
from countbot.channels.email.postman import Postman
from countbot.channels.kit import ChannelKit
from countbot.config.settings import ChannelSettings, EmailSettings
from countbot.runtime.outbound import ChannelSender

log = logging.getLogger(__name__)

# Threads remembered for replies (subject, last mail); the oldest are forgotten first.
MAX_THREADS = 1000
CONNECT_TIMEOUT = 30.0


class EmailChannel(Channel):
    name = "email"
    capabilities = ChannelCapabilities(
        edits_in_place=False,
        max_message_length=MAX_MESSAGE,
        markup="plain",
        media_in=True,
        media_out=True,
        typing_indicator=False,
    )

    def __init__(self, kit: ChannelKit) -> None:
        self._kit = kit
        self._link = PostmanLink("email")
        self._threads: dict[str, Thread] = {}
        self._sender = EmailSender(self._link, self._threads)
        self._mode = "connecting"

    @staticmethod
    def problem(settings: ChannelSettings) -> str | None:
        if not isinstance(settings, EmailSettings) or not settings.address:
            return "channels.email.address is not set (the assistant's own mail address)"
        if not settings.imap_host or not settings.smtp_host:
            return "channels.email.imap_host and smtp_host must both be set"
        if settings.password is None:
            return "channels.email.password is not set"
        return None

    @property
    def sender(self) -> ChannelSender:
        return self._sender

    def details(self) -> dict[str, Any]:
        return {"bot": self._settings().address, "connection": self._mode}

    def _settings(self) -> EmailSettings:
        settings = self._kit.settings()
        assert isinstance(settings, EmailSettings)
        return settings

    async def run(self, started: Callable[[], None]) -> None:
        settings = self._settings()
        assert settings.address and settings.imap_host and settings.smtp_host
        assert settings.password is not None
        user = settings.username or settings.address
        password = settings.password.get_secret_value()
        mailbox = await asyncio.to_thread(
            Mailbox, settings.imap_host, settings.imap_port, settings.imap_security, CONNECT_TIMEOUT
        )
        try:
            await asyncio.to_thread(mailbox.open, user, password, settings.mailbox)
            self._link.current = Postman(
                settings.smtp_host,
                settings.smtp_port,
                settings.smtp_security,
                settings.address,
                user,
                password,
            )
            self._mode = "ok (IDLE)" if mailbox.can_idle else "ok (polling)"
            started()
            while True:
                for uid in await asyncio.to_thread(mailbox.unseen):
                    raw = await asyncio.to_thread(mailbox.fetch, uid)
                    if raw is not None:
                        await self._take_safely(raw)
                    await asyncio.to_thread(mailbox.mark_seen, uid)
                if mailbox.can_idle:
                    await asyncio.to_thread(mailbox.idle, settings.poll_interval)
                else:
                    await asyncio.sleep(settings.poll_interval)
        finally:
            self._link.current = None
            self._mode = "connecting"
            await asyncio.to_thread(mailbox.close)

    async def _take_safely(self, raw: bytes) -> None:
        """A mail that cannot be handled is logged and left (read) on the server: one odd mail
        must not stop the channel by failing again after every reconnect."""
        try:
            await self._take(raw)
        except Exception:
            log.exception("email: a mail could not be handled; it stays in the mailbox")

    async def _take(self, raw: bytes) -> None:
        settings = self._settings()
        message = await asyncio.to_thread(parse, raw)
        assert settings.address
        found = await to_incoming(
            message,
            settings.address,
            settings.authserv_id,
            settings.require_authentication,
            self._kit.media,
        )
        if found is None:
            return
        incoming, thread = found
        self._threads[incoming.chat_id] = thread
        while len(self._threads) > MAX_THREADS:
            del self._threads[next(iter(self._threads))]
        chat = EmailChat(self._link, incoming.chat_id, self._threads)
        await self._kit.intake.handle(incoming, chat)
