"""A mail provider on 127.0.0.1 for the email channel: aiosmtpd as the real SMTP server the
channel sends through, and a small IMAP4rev1 server (the commands `imaplib` and the channel use:
CAPABILITY, LOGIN, SELECT, UID SEARCH/FETCH/STORE, NOOP, IDLE, LOGOUT) holding the inbox.

An outage drops every IMAP connection and refuses new ones until it ends; mail delivered to the
inbox meanwhile waits there, unseen, as on a real server.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import make_msgid
from typing import Any

from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

from tests.channels.loopback import wait_until

BOT = "assistant@home.test"
PASSWORD = "fake-mail-password"
AUTHSERV = "mx.home.test"

_COMMAND = re.compile(rb"^(\S+) (?:UID )?(\w+)\s*(.*)$", re.IGNORECASE)


def mail(
    sender: str,
    text: str,
    *,
    subject: str = "Hello",
    html: str | None = None,
    attachment: tuple[str, str, bytes] | None = None,
    in_reply_to: str | None = None,
    references: tuple[str, ...] = (),
    auth: str | None = "pass",
) -> EmailMessage:
    """A mail as a provider would store it, with its `Authentication-Results` (None: none)."""
    message = EmailMessage()
    message["From"] = f"Alice <{sender}>"
    message["To"] = BOT
    message["Subject"] = subject
    message["Message-ID"] = make_msgid("user", sender.rsplit("@", 1)[-1])
    domain = sender.rsplit("@", 1)[-1]
    if auth is not None:
        message["Authentication-Results"] = (
            f"{AUTHSERV}; dkim={auth} header.d={domain}; spf={auth} smtp.mailfrom={sender}"
        )
    if in_reply_to:
        message["In-Reply-To"] = in_reply_to
    if references:
        message["References"] = " ".join(references)
    if html is not None and not text:
        message.set_content(html, subtype="html")  # HTML only, as many mail apps send
    else:
        message.set_content(text)
    if html is not None and text:
        message.add_alternative(html, subtype="html")
    if attachment is not None:
        name, kind, data = attachment
        main, sub = kind.split("/")
        message.add_attachment(data, maintype=main, subtype=sub, filename=name)
    return message


@dataclass
class Stored:
    uid: int
    raw: bytes
    seen: bool = False


@dataclass
class FakeMail:
    inbox: list[Stored] = field(default_factory=list)
    sent: list[EmailMessage] = field(default_factory=list)
    refused: set[str] = field(default_factory=set)
    commands: list[str] = field(default_factory=list)
    idle: bool = True

    def __post_init__(self) -> None:
        self.imap_port = 0
        self.smtp_port = 0
        self._imap: asyncio.Server | None = None
        self._smtp: asyncio.Server | None = None
        self._clients: set[asyncio.StreamWriter] = set()
        self._news = asyncio.Condition()
        self._uids = 0

    async def start(self) -> None:
        await self._serve_imap()
        self._smtp = await asyncio.get_running_loop().create_server(
            lambda: SMTP(
                self,
                hostname="mx.home.test",
                authenticator=self._authenticate,
                auth_require_tls=False,  # loopback; production mail uses ssl or starttls
            ),
            "127.0.0.1",
            0,
        )
        self.smtp_port = self._smtp.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        await self._drop_clients()
        for server in (self._imap, self._smtp):
            if server is not None:
                server.close()

    async def _serve_imap(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.imap_port))
        self._imap = await asyncio.start_server(self._client, sock=listener)
        self.imap_port = listener.getsockname()[1]

    # --- what tests do ------------------------------------------------------------------------

    async def deliver(self, message: EmailMessage) -> EmailMessage:
        """`message` lands in the inbox, unseen; a client in IDLE hears of it."""
        self._uids += 1
        self.inbox.append(Stored(self._uids, bytes(message)))
        async with self._news:
            self._news.notify_all()
        return message

    async def outage(self) -> None:
        if self._imap is not None:
            self._imap.close()
        await self._drop_clients()

    async def recover(self) -> None:
        await self._serve_imap()

    async def _drop_clients(self) -> None:
        for writer in list(self._clients):
            writer.close()
        self._clients.clear()

    @property
    def connected(self) -> bool:
        return bool(self._clients)

    def replies_to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.sent if address in str(m["To"])]

    def texts_to(self, address: str) -> list[str]:
        return [
            str(m.get_body(preferencelist=("plain",)).get_content())  # type: ignore[union-attr]
            .replace("\r\n", "\n")
            .strip()
            for m in self.replies_to(address)
        ]

    async def wait_until(self, check: Callable[[], bool], what: str = "condition") -> None:
        await wait_until(check, what, lambda: self.commands[-20:])

    async def wait_for_replies(self, address: str, count: int = 1) -> list[str]:
        await self.wait_until(
            lambda: len(self.replies_to(address)) >= count, f"{count} mail(s) to {address}"
        )
        return self.texts_to(address)

    # --- SMTP (aiosmtpd handler hooks) --------------------------------------------------------

    def _authenticate(
        self, server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: Any
    ) -> AuthResult:
        good = isinstance(data, LoginPassword) and (data.login, data.password) == (
            BOT.encode(),
            PASSWORD.encode(),
        )
        return AuthResult(success=good)

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        if address in self.refused:
            return "550 5.1.1 no such mailbox"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        assert isinstance(envelope.content, bytes)
        message = BytesParser(policy=policy.default).parsebytes(envelope.content)
        assert isinstance(message, EmailMessage)
        self.sent.append(message)
        return "250 OK"

    # --- IMAP ---------------------------------------------------------------------------------

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._clients.add(writer)
        caps = "IMAP4rev1 IDLE" if self.idle else "IMAP4rev1"
        try:
            writer.write(f"* OK [CAPABILITY {caps}] fake IMAP ready\r\n".encode())
            while line := await reader.readline():
                match = _COMMAND.match(line.rstrip(b"\r\n"))
                if match is None:
                    writer.write(b"* BAD what?\r\n")
                    continue
                tag, verb, rest = match.group(1), match.group(2).upper(), match.group(3)
                self.commands.append(verb.decode())
                if not await self._command(reader, writer, tag, verb, rest, caps):
                    break
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._clients.discard(writer)
            writer.close()

    async def _command(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        tag: bytes,
        verb: bytes,
        rest: bytes,
        caps: str,
    ) -> bool:
        ok = tag + b" OK done\r\n"
        if verb == b"CAPABILITY":
            writer.write(f"* CAPABILITY {caps}\r\n".encode() + ok)
        elif verb == b"LOGIN":
            user, password = (part.strip(b'"') for part in rest.split(b" ", 1))
            if (user.decode(), password.decode()) != (BOT, PASSWORD):
                writer.write(tag + b" NO [AUTHENTICATIONFAILED] wrong password\r\n")
            else:
                writer.write(ok)
        elif verb == b"SELECT":
            writer.write(f"* {len(self.inbox)} EXISTS\r\n* FLAGS (\\Seen)\r\n".encode())
            writer.write(tag + b" OK [READ-WRITE] selected\r\n")
        elif verb == b"SEARCH":
            unseen = " ".join(str(m.uid) for m in self.inbox if not m.seen)
            writer.write(f"* SEARCH {unseen}".rstrip().encode() + b"\r\n" + ok)
        elif verb == b"FETCH":
            stored = self._by_uid(rest)
            if stored is not None:
                index = self.inbox.index(stored) + 1
                head = f"* {index} FETCH (UID {stored.uid} BODY[] {{{len(stored.raw)}}}\r\n"
                writer.write(head.encode() + stored.raw + b")\r\n")
            writer.write(ok)
        elif verb == b"STORE":
            stored = self._by_uid(rest)
            if stored is not None:
                stored.seen = True
                index = self.inbox.index(stored) + 1
                writer.write(f"* {index} FETCH (UID {stored.uid} FLAGS (\\Seen))\r\n".encode())
            writer.write(ok)
        elif verb == b"NOOP":
            writer.write(ok)
        elif verb == b"IDLE":
            await self._idle(reader, writer, tag)
        elif verb == b"LOGOUT":
            writer.write(b"* BYE bye\r\n" + ok)
            return False
        else:
            writer.write(tag + b" BAD unknown command\r\n")
        return True

    def _by_uid(self, rest: bytes) -> Stored | None:
        uid = int(rest.split(b" ", 1)[0])
        return next((m for m in self.inbox if m.uid == uid), None)

    async def _idle(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tag: bytes
    ) -> None:
        writer.write(b"+ idling\r\n")
        await writer.drain()
        done = asyncio.ensure_future(reader.readline())
        news = asyncio.ensure_future(self._wait_for_news())
        try:
            await asyncio.wait({done, news}, return_when=asyncio.FIRST_COMPLETED)
            if news.done():
                writer.write(f"* {len(self.inbox)} EXISTS\r\n".encode())
                await writer.drain()
            line = await done
            if line.strip().upper() == b"DONE":
                writer.write(tag + b" OK IDLE terminated\r\n")
        finally:
            news.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await news

    async def _wait_for_news(self) -> None:
        async with self._news:
            await self._news.wait()
