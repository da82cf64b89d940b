"""Why a channel stopped, in words a person can act on, and the failure retrying cannot mend.

A channel that crashes is restarted with backoff; the Channels page shows why. An exception's
class and errno (`httpx.ConnectError: [Errno -2] Name or service not known`) tell a person
nothing, so the reason is told by what happened: the name did not resolve, the connection was
refused, it timed out, TLS failed. Each reason has a short `code` the UI translates, with the
words as the fallback. A platform that says the credentials are wrong raises
`CredentialsRejected`: the manager then stops the channel and says so instead of retrying a
token that will never work.
"""

from __future__ import annotations

import errno
import socket
import ssl
from dataclasses import dataclass


class CredentialsRejected(Exception):
    """The platform refused the channel's token or secret: retrying cannot help."""


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a channel's run ended: a `code` for the UI's table of words, and the words."""

    code: str
    words: str


# Name-resolution errors (`socket.gaierror` numbers): no network, or no DNS for the host.
_NO_NAME = {socket.EAI_NONAME, socket.EAI_AGAIN, getattr(socket, "EAI_NODATA", -5)}
_BY_ERRNO = {
    errno.ECONNREFUSED: ("refused", "the platform's server refused the connection"),
    errno.ECONNRESET: ("reset", "the connection was cut by the other side"),
    errno.ENETUNREACH: ("no_network", "there is no network route to the platform"),
    errno.EHOSTUNREACH: ("no_network", "there is no network route to the platform"),
    errno.ETIMEDOUT: ("timeout", "the platform did not answer in time"),
}


def failure_of(exc: BaseException) -> Failure:
    """What `exc` (and the errors it was raised from) means for the person setting it up."""
    if isinstance(exc, CredentialsRejected):
        return Failure("rejected", str(exc))
    for cause in _chain(exc):
        if isinstance(cause, socket.gaierror) and cause.errno in _NO_NAME:
            return Failure(
                "no_network",
                "the platform's address could not be looked up: is this machine online?",
            )
        if isinstance(cause, ssl.SSLError):
            reason = getattr(cause, "reason", None) or "the secure connection failed"
            return Failure("tls", f"the secure connection failed ({str(reason).lower()})")
        if isinstance(cause, TimeoutError):
            return Failure("timeout", "the platform did not answer in time")
        if isinstance(cause, OSError) and cause.errno in _BY_ERRNO:
            return Failure(*_BY_ERRNO[cause.errno])
    text = str(exc).strip()
    return Failure("other", text or "it stopped without saying why")


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and what it was raised from or while handling, outermost first, without loops."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 10:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen
