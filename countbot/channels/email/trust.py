"""Whether a mail's From address can be believed: anyone can write any From header, so the
receiving server's `Authentication-Results` (RFC 8601) must vouch for it first.

Only one such header counts: the one from `authserv_id` when it is set, else the topmost (the
last server to add one is the receiving server; headers further down came with the mail and may
be forged). The From address is trusted when DMARC passed for its domain, or DKIM passed with a
signing domain that is the From domain (or its parent), or SPF passed for an envelope sender of
the From domain.
"""

from __future__ import annotations

import re
from email.message import EmailMessage

_RESULT = re.compile(r"\b(dmarc|dkim|spf)\s*=\s*(\w+)([^;]*)", re.IGNORECASE)
_PROPERTY = re.compile(r"\b(header\.from|header\.d|header\.i|smtp\.mailfrom)\s*=\s*([^\s;]+)", re.I)


def _domain(value: str) -> str:
    return value.rsplit("@", 1)[-1].strip().strip(".").lower()


def _within(domain: str, sender_domain: str) -> bool:
    return sender_domain == domain or sender_domain.endswith("." + domain)


def vouched(message: EmailMessage, sender: str, authserv_id: str | None) -> bool:
    """Whether the receiving server authenticated `sender` (an address from the From header)."""
    headers = [str(h) for h in message.get_all("Authentication-Results") or ()]
    if authserv_id is not None:
        headers = [h for h in headers if h.split(";", 1)[0].strip().lower() == authserv_id.lower()]
    if not headers:
        return False
    sender_domain = _domain(sender)
    for method, result, rest in _RESULT.findall(headers[0]):
        if result.lower() != "pass":
            continue
        properties = {key.lower(): value for key, value in _PROPERTY.findall(rest)}
        method = method.lower()
        if method == "dmarc" and _domain(properties.get("header.from", "")) == sender_domain:
            return True
        signer = properties.get("header.d") or _domain(properties.get("header.i", ""))
        if method == "dkim" and signer and _within(_domain(signer), sender_domain):
            return True
        envelope = properties.get("smtp.mailfrom", "")
        if method == "spf" and envelope and _domain(envelope) == sender_domain:
            return True
    return False
