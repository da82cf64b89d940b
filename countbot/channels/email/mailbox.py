"""The IMAP side, with the standard library's `imaplib` (blocking: every call runs in a worker
thread). New mail is what is not yet `\\Seen`; a mail is marked seen only after the daemon took
it in, so mail that arrives while the daemon is down or disconnected is read on reconnect.
Waiting for news uses IDLE where the server offers it (woken by an `EXISTS`); the channel polls
otherwise.
"""

from __future__ import annotations

import contextlib
import imaplib
import select
import ssl
from collections.abc import Callable
from typing import Any, Literal

Security = Literal["ssl", "starttls", "none"]


class MailboxError(Exception):
    """The IMAP server refused something or went away."""


class Mailbox:
    def __init__(self, host: str, port: int, security: Security, timeout: float) -> None:
        try:
            if security == "ssl":
                context = ssl.create_default_context()
                self._imap: imaplib.IMAP4 = imaplib.IMAP4_SSL(
                    host, port, ssl_context=context, timeout=timeout
                )
            else:
                self._imap = imaplib.IMAP4(host, port, timeout=timeout)
                if security == "starttls":
                    self._imap.starttls(ssl.create_default_context())
        except (OSError, imaplib.IMAP4.error) as exc:
            raise MailboxError(f"cannot reach {host}:{port}: {exc}") from exc

    def open(self, user: str, password: str, folder: str) -> None:
        self._do(lambda: self._imap.login(user, password))
        self._do(lambda: self._imap.select(folder))

    @property
    def can_idle(self) -> bool:
        return "IDLE" in self._imap.capabilities

    def unseen(self) -> list[bytes]:
        _, data = self._do(lambda: self._imap.uid("SEARCH", "UNSEEN"))
        return data[0].split() if data and data[0] else []

    def fetch(self, uid: bytes) -> bytes | None:
        """The whole mail, without marking it seen."""
        _, data = self._do(lambda: self._imap.uid("FETCH", uid, "(BODY.PEEK[])"))
        for item in data:
            if isinstance(item, tuple) and len(item) == 2:
                return bytes(item[1])
        return None

    def mark_seen(self, uid: bytes) -> None:
        self._do(lambda: self._imap.uid("STORE", uid, "+FLAGS", "(\\Seen)"))

    def idle(self, timeout: float) -> None:
        """Until new mail may have arrived (an untagged `EXISTS`), at most `timeout` s."""
        imap = self._imap
        tag = imap._new_tag()  # imaplib (before 3.14) has no IDLE: speak it on its connection
        try:
            imap.send(tag + b" IDLE\r\n")
            if not imap.readline().startswith(b"+"):
                raise MailboxError("the server refused IDLE")
            readable, _, _ = select.select([imap.sock], [], [], timeout)
            if readable:
                imap.readline()  # "* n EXISTS" (or anything else: look again either way)
            imap.send(b"DONE\r\n")
            while True:
                line = imap.readline()
                if not line:
                    raise MailboxError("the server closed the connection")
                if line.startswith(tag):
                    break
        except OSError as exc:
            raise MailboxError(f"the connection broke: {exc}") from exc
        finally:
            imap.tagged_commands.pop(tag, None)

    def close(self) -> None:
        """Shut the connection (also wakes a thread waiting in `idle`)."""
        with contextlib.suppress(OSError):
            self._imap.shutdown()

    @staticmethod
    def _do(command: Callable[[], tuple[str, list[Any]]]) -> tuple[str, list[Any]]:
        try:
            status, data = command()
        except (OSError, imaplib.IMAP4.error) as exc:
            raise MailboxError(str(exc)) from exc
        if status != "OK":
            raise MailboxError(f"the server answered {status}: {data!r}")
        return status, data
