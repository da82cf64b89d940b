"""Who may talk to the daemon: the access token, the session cookie it buys, and allowed origins.

Pure decisions (no I/O), so the ASGI guard and the login page share one set of rules.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import ipaddress
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qs, urlsplit

from countbot.config.settings import WebSettings

COOKIE_NAME = "countbot_session"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host.strip("[]") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _canonical(name: str) -> str:
    """One spelling per host: `[0:0::1]` is `::1`, `LocalHost.` is `localhost`."""
    name = name.strip().strip("[]").lower()
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name.rstrip(".")


@dataclass(frozen=True, slots=True)
class AccessPolicy:
    """The token (None: open, loopback only) and the origins/hosts pages may come from."""

    token: str | None
    origins: frozenset[str]
    # Host header names accepted (guards against DNS rebinding); None: any. Always checked on a
    # loopback bind; on another bind once `web.allowed_hosts` names any (else the token guards).
    hostnames: frozenset[str] | None

    @classmethod
    def from_settings(cls, web: WebSettings, port: int) -> AccessPolicy:
        """The policy for a daemon on `web.host` listening on `port` (the bound one).

        The bound address itself (127.0.0.2, a LAN address) and every `web.allowed_hosts` name
        are accepted as Host and as the origin of the UI served under that name.
        """
        token = web.token.get_secret_value() if web.token else None
        allowed = {_canonical(name) for name in web.allowed_hosts} - {""}
        names = {_canonical(web.host), *allowed}
        if is_loopback(web.host) or web.host in WILDCARDS:
            names.update(LOOPBACK_NAMES)
        names -= WILDCARDS
        origins = {_origin(name, port) for name in names}
        # A name the user listed may also be reached through a TLS reverse proxy.
        origins |= {f"https://{_shown(name)}" for name in allowed}
        extra = {o.rstrip("/").lower() for o in web.allowed_origins}
        hostnames = None
        if is_loopback(web.host) or allowed:
            hostnames = frozenset(
                {*names, *(_canonical(urlsplit(o).hostname or "") for o in extra)} - {""}
            )
        return cls(token or None, frozenset(origins | extra), hostnames)

    def origin_allowed(self, origin: str) -> bool:
        return origin.rstrip("/").lower() in self.origins

    def host_allowed(self, host_header: str | None) -> bool:
        if self.hostnames is None or host_header is None:
            return True
        try:
            hostname = urlsplit(f"//{host_header}").hostname or ""
        except ValueError:  # an unbalanced "[" is no host of ours
            return False
        return _canonical(hostname) in self.hostnames

    def cookie_value(self) -> str:
        """What the login cookie holds: derived from the token, so rotating the token logs out."""
        assert self.token is not None
        return hmac.new(self.token.encode(), b"countbot-session-v1", hashlib.sha256).hexdigest()

    def token_matches(self, candidate: str) -> bool:
        return self.token is not None and hmac.compare_digest(
            candidate.encode(), self.token.encode()
        )

    def authenticated(self, authorization: str | None, cookie: str | None, query: str) -> bool:
        """Bearer header, login cookie or `?token=`; always True when no token is configured."""
        if self.token is None:
            return True
        if authorization:
            scheme, _, credentials = authorization.partition(" ")
            if scheme.lower() == "bearer" and self.token_matches(credentials.strip()):
                return True
        if cookie:
            jar: SimpleCookie = SimpleCookie()
            with contextlib.suppress(CookieError):
                jar.load(cookie)
            morsel = jar.get(COOKIE_NAME)
            if morsel is not None and hmac.compare_digest(
                morsel.value.encode(), self.cookie_value().encode()
            ):
                return True
        return any(self.token_matches(c) for c in parse_qs(query).get("token", ()))


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _origin(host: str, port: int) -> str:
    shown = _shown(host)
    return (f"http://{shown}" if port == 80 else f"http://{shown}:{port}").lower()
