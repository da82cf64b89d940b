"""A received mail to `Incoming`: who sent it (if the server vouched for them), which
conversation it belongs to, its text and its attachments.

A conversation is a mail thread: the chat `<address>/<root Message-ID>`, where the root is the
first id in `References` (mail clients keep it through the whole thread), else `In-Reply-To`,
else the mail's own id. Only the sender is ever answered, never the others on the mail.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses, make_msgid
from functools import partial

from countbot.channels.door import (
    Attachment,
    Author,
    Incoming,
    SenderInfo,
    decode_declared,
    html_to_text,
    with_attachments,
)
from countbot.channels.email.trust import vouched

log = logging.getLogger(__name__)

_MESSAGE_ID = re.compile(r"<[^<>\s]+>")
# Where the quoted earlier mail starts in a reply ("On Mon, Alice wrote:" then "> ...").
# A forward: by its subject (Fwd:, Fw:, WG:, TR:) or the line mail clients put above it.
_FORWARDED = re.compile(r"\s*(fwd?|wg|tr)\s*:", re.IGNORECASE)
_FORWARDED_BODY = re.compile(r"^\W*(-+ ?forwarded message|begin forwarded message)", re.I | re.M)
_QUOTE_START = re.compile(r"^\s*(On .{0,200}wrote:|>)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Thread:
    """What a reply needs to land in the sender's thread."""

    subject: str
    last_id: str
    references: tuple[str, ...]


def parse_mail(raw: bytes) -> EmailMessage:
    message = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    return message


def thread_of(message: EmailMessage) -> tuple[str, Thread]:
    """(the root Message-ID of the mail's thread, how to reply into it)."""
    own = str(message.get("Message-ID") or "").strip() or make_msgid("countbot")
    references = tuple(_MESSAGE_ID.findall(str(message.get("References") or "")))
    replied = _MESSAGE_ID.findall(str(message.get("In-Reply-To") or ""))
    if references:
        chain = (*references, own)
    elif replied:
        chain = (replied[0], own)
    else:
        chain = (own,)
    subject = str(message.get("Subject") or "").strip()
    return chain[0], Thread(subject, own, chain)


def sender_of(message: EmailMessage) -> str | None:
    """The single From address, lowercased; None when there is not exactly one."""
    found = [address for _, address in getaddresses(message.get_all("From") or ()) if address]
    return found[0].lower() if len(found) == 1 else None


def body_text(message: EmailMessage) -> str:
    """The new text of the mail: the plain part (else the HTML one as text), quotes cut off."""
    text = _part_text(message, "plain") or _part_text(message, "html")
    quote = _QUOTE_START.search(text)
    return (text[: quote.start()] if quote else text).strip()


def _author(message: EmailMessage, sender: str, authentic: bool, text: str) -> Author | None:
    """Who wrote the mail when it is not the sender's own word (None: it is): a From the
    receiving server did not vouch for may be anyone, and a forwarded mail is its author's."""
    if not authentic:
        return Author("mail", f"claiming to be {sender}")
    if _FORWARDED.match(str(message.get("Subject") or "")) or _FORWARDED_BODY.search(text):
        return Author("forward", "a mail the user forwarded")
    return None


def _part_text(message: EmailMessage, subtype: str) -> str:
    part = message.get_body(preferencelist=(subtype,))
    if part is None:
        return ""
    data = part.get_payload(decode=True)
    if not isinstance(data, bytes):
        return ""
    # The declared charset is the sender's word: one that cannot be used falls back to UTF-8.
    content = decode_declared(data, part.get_content_charset())
    return (html_to_text(content) if subtype == "html" else content).strip()


def _attachments(message: EmailMessage) -> list[Attachment]:
    found = []
    for index, part in enumerate(message.iter_attachments()):
        data = part.get_payload(decode=True)
        if not isinstance(data, bytes):
            continue
        main_type = part.get_content_maintype()
        kind = main_type if main_type in ("image", "audio") else "file"
        name = part.get_filename() or f"attachment-{index}"
        found.append(Attachment(kind, name, partial(_ready, data), part.get_content_type()))
    return found


async def _ready(data: bytes) -> bytes:
    return data


def to_incoming(
    message: EmailMessage, own_address: str, authserv_id: str | None, require_authentication: bool
) -> tuple[Incoming, Thread] | None:
    """The mail as the assistant should see it and how to answer it; None when it is not for
    the assistant (no single sender, our own mail, an automatic one, or a From the server did
    not vouch for)."""
    sender = sender_of(message)
    if sender is None or sender == own_address.lower():
        return None
    if str(message.get("Auto-Submitted") or "no").strip().lower() != "no":
        return None  # an auto-reply or a bounce: answering it could start a mail loop
    authentic = vouched(message, sender, authserv_id)
    if require_authentication and not authentic:
        log.warning("email: dropped a mail claiming to be from %s: not authenticated", sender)
        return None
    root, thread = thread_of(message)
    text = body_text(message)
    if thread.subject and not thread.subject.lower().startswith("re:"):
        text = f"{thread.subject}\n\n{text}".strip()
    name = str(message.get("From") or "").split("<", 1)[0].strip().strip('"')
    info = SenderInfo(sender, None, name if name != sender else "")
    author = _author(message, sender, authentic, text)
    draft = Incoming(f"{sender}/{root}", info, thread.last_id, text, written_by=author)
    incoming = with_attachments(draft, _attachments(message))
    return None if incoming is None else (incoming, thread)
