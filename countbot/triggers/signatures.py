"""Whether a webhook request was signed by whoever holds the hook's secret, and its delivery id.

Two schemes, one per hook: Standard Webhooks (`webhook-id`, `webhook-timestamp` and
`webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`; a `whsec_` secret is the
base64 of the key, any other secret is the key's bytes) and GitHub's `X-Hub-Signature-256:
sha256=<hex HMAC-SHA256 of the body>` with `X-GitHub-Delivery` as the id. Standard Webhooks signs
its timestamp, so a request outside the tolerance is refused (a replay); GitHub signs none, and
its delivery id is what stops a replay (the ledger keeps ids 30 days). The `standardwebhooks`
package does the first in the same few lines of `hmac`, with four dependencies more.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Scheme = Literal["standard", "github"]
# Longest delivery id kept (ids are uuids or short tokens; the key column is not a dump).
MAX_ID = 200


class SignatureRefused(Exception):
    """The request is not the hook's: the reason, for the sender (never the secret)."""


@dataclass(frozen=True, slots=True)
class Signed:
    """A verified request: its delivery id, and what the sender said the event is."""

    delivery_id: str
    event: str = ""


def verify(
    scheme: Scheme,
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    now: float,
    tolerance: float,
) -> Signed:
    """The request's delivery id once its signature checks out; `SignatureRefused` otherwise.
    `headers` is looked up by lower-case name."""
    if scheme == "github":
        return _github(secret, headers, body)
    return _standard(secret, headers, body, now, tolerance)


def _standard(
    secret: str, headers: Mapping[str, str], body: bytes, now: float, tolerance: float
) -> Signed:
    delivery_id = headers.get("webhook-id", "")
    stamp = headers.get("webhook-timestamp", "")
    signatures = headers.get("webhook-signature", "")
    if not (delivery_id and stamp and signatures):
        raise SignatureRefused(
            "missing signature: send webhook-id, webhook-timestamp and webhook-signature"
        )
    _check_id(delivery_id)
    if not stamp.isdigit() or len(stamp) > 12:
        raise SignatureRefused("webhook-timestamp is not a Unix time in seconds")
    if abs(now - int(stamp)) > tolerance:
        raise SignatureRefused(
            f"webhook-timestamp is more than {tolerance:g} s from this machine's clock"
        )
    signed = f"{delivery_id}.{stamp}.".encode() + body
    expected = base64.b64encode(hmac.digest(_standard_key(secret), signed, hashlib.sha256))
    for candidate in signatures.split():
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value.encode(), expected):
            return Signed(delivery_id, headers.get("webhook-event", ""))
    raise SignatureRefused("bad signature")


def _standard_key(secret: str) -> bytes:
    if secret.startswith("whsec_"):
        try:
            return base64.b64decode(secret.removeprefix("whsec_"), validate=True)
        except binascii.Error:
            pass  # not base64 after all: the text itself is the key
    return secret.encode()


def _github(secret: str, headers: Mapping[str, str], body: bytes) -> Signed:
    signature = headers.get("x-hub-signature-256", "")
    delivery_id = headers.get("x-github-delivery", "")
    if not signature or not delivery_id:
        raise SignatureRefused("missing signature: send X-Hub-Signature-256 and X-GitHub-Delivery")
    _check_id(delivery_id)
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(signature.strip().lower().encode(), expected.encode()):
        raise SignatureRefused("bad signature")
    return Signed(delivery_id, headers.get("x-github-event", ""))


def _check_id(delivery_id: str) -> None:
    if len(delivery_id) > MAX_ID or not delivery_id.isprintable():
        raise SignatureRefused(f"the delivery id must be printable and at most {MAX_ID} characters")
