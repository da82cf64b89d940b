"""The SMTP side, with the standard library's `smtplib` in a worker thread: one mail per call,
its failures as `SendError` (5xx and refused recipients are permanent, the rest may pass later).
"""

from __future__ import annotations

import asyncio
import mimetypes
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from countbot.channels.door import SendError
from countbot.channels.email.mailbox import Security


@dataclass(frozen=True, slots=True)
class Outgoing:
    to: str
    subject: str
    text: str
    in_reply_to: str | None = None
    references: tuple[str, ...] = ()
    attachment: tuple[str, bytes] | None = None


@dataclass(frozen=True, slots=True)
class Postman:
    host: str
    port: int
    security: Security
    address: str
    user: str | None
    password: str | None
    timeout: float = 30.0

    async def send(self, mail: Outgoing) -> str:
        """Send one mail; returns its Message-ID."""
        message = self._compose(mail)
        await asyncio.to_thread(self._deliver, message)
        return str(message["Message-ID"])

    def _compose(self, mail: Outgoing) -> EmailMessage:
        message = EmailMessage()
        message["From"] = self.address
        message["To"] = mail.to
        message["Subject"] = mail.subject
        message["Date"] = formatdate(localtime=True)
        message["Message-ID"] = make_msgid("countbot", self.address.rsplit("@", 1)[-1])
        if mail.in_reply_to:
            message["In-Reply-To"] = mail.in_reply_to
        if mail.references:
            message["References"] = " ".join(mail.references)
        message["Auto-Submitted"] = "auto-replied" if mail.in_reply_to else "auto-generated"
        message.set_content(mail.text)
        if mail.attachment is not None:
            name, data = mail.attachment
            kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
            main, sub = kind.split("/", 1)
            message.add_attachment(data, maintype=main, subtype=sub, filename=name)
        return message

    def _deliver(self, message: EmailMessage) -> None:
        try:
            if self.security == "ssl":
                context = ssl.create_default_context()
                client: smtplib.SMTP = smtplib.SMTP_SSL(
                    self.host, self.port, timeout=self.timeout, context=context
                )
            else:
                client = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
            with client:
                if self.security == "starttls":
                    client.starttls(context=ssl.create_default_context())
                if self.user and self.password:
                    client.login(self.user, self.password)
                client.send_message(message)
        except smtplib.SMTPRecipientsRefused as exc:
            raise SendError(f"the recipient was refused: {exc.recipients}", permanent=True) from exc
        except smtplib.SMTPResponseException as exc:
            detail = f"{exc.smtp_code} {exc.smtp_error.decode(errors='replace')}"
            raise SendError(detail, permanent=500 <= exc.smtp_code < 600) from exc
        except (smtplib.SMTPException, OSError) as exc:
            raise SendError(f"the mail server is unreachable: {exc}") from exc
