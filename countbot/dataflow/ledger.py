"""What one turn has let into the model's context: untrusted sources and private values.

The ledger lives on the turn's `ToolContext` (`gate_state`). Tool results add to it as they
arrive (`observe`); the turn's own inputs (the user's messages, the running summary, USER.md,
the configured secrets) are added once, the first time a call would send something out. Private
text is indexed lazily and in slices, so a turn that never sends anything pays nothing and a big
file never stalls the event loop.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from countbot.dataflow.matching import Hit, PrivateIndex, normalize, payload_forms

# Private text indexed per turn; past it, what the turn holds is too much to check and every
# outbound call after untrusted content asks (fail closed rather than miss a value).
MAX_PRIVATE_CHARS = 4_000_000
# Untrusted text kept per turn to recognise links in it and text that came from a host.
MAX_UNTRUSTED_CHARS = 4_000_000
# Indexed at a time between yields to the event loop (a few milliseconds of work each).
_SLICE = 8192
# Slices overlap by this much, so a value across a slice boundary is still indexed whole.
_OVERLAP = 256

_URL = re.compile(r"https?://[^\s<>\"'()\[\]]+", re.IGNORECASE)
_BARE_HOST = re.compile(r"(?<![\w@.-])((?:[a-z0-9-]+\.)+[a-z]{2,})(?![\w-])", re.IGNORECASE)


def url_host(url: str) -> str:
    """The lower-case host of `url` ('' when it has none)."""
    try:
        return (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return ""


def named_hosts(text: str) -> set[str]:
    """Hosts a text names: of its URLs and bare names like example.com."""
    hosts = {url_host(match) for match in _URL.findall(text)}
    hosts.update(match.lower() for match in _BARE_HOST.findall(text))
    hosts.discard("")
    return hosts


@dataclass(slots=True)
class TurnLedger:
    """Sources and values of one turn; see the module docstring."""

    untrusted: list[str] = field(default_factory=list)
    # Reading the turn's own inputs (`OutboundPolicy`), started by the first call that needs them.
    seeding: asyncio.Future[None] | None = None
    # How many of the turn's steered messages (`ToolContext.steered`) are in the ledger.
    steered: int = 0
    too_much: bool = False
    # The owner's words whose hosts and URLs are not read yet: only a call sending somewhere
    # asks for them (`owner_hosts`, `owner_urls`), and most turns make none.
    _owner_words: list[str] = field(default_factory=list)
    _owner_hosts: set[str] = field(default_factory=set)
    # Normal form of the owner's words per host they named (URLs given), and of the request.
    _owner_urls: dict[str, str] = field(default_factory=dict)
    request: str = ""
    # Raw untrusted text per origin (a host, "search", "mcp:<server>"), bounded in total.
    seen: dict[str, list[str]] = field(default_factory=dict)
    seen_chars: int = 0
    _index: PrivateIndex = field(default_factory=PrivateIndex)
    _pending: list[tuple[str, str]] = field(default_factory=list)
    _pending_chars: int = 0
    _normal_seen: dict[str, str] = field(default_factory=dict)

    @property
    def tainted(self) -> bool:
        return bool(self.untrusted)

    def add_untrusted(self, source: str, origin: str, text: str) -> None:
        if source not in self.untrusted:
            self.untrusted.append(source)
        if self.seen_chars + len(text) <= MAX_UNTRUSTED_CHARS:
            self.seen.setdefault(origin, []).append(text)
            self.seen_chars += len(text)
            self._normal_seen.pop(origin, None)

    def add_private(self, source: str, text: str) -> None:
        if not text:
            return
        if self._index.indexed_chars + self._pending_chars + len(text) > MAX_PRIVATE_CHARS:
            self.too_much = True
            return
        self._pending.append((source, text))
        self._pending_chars += len(text)

    def add_owner_words(self, texts: Iterable[str]) -> None:
        """The user's own messages: private, and the hosts and URLs they name (read when a
        call first asks for them)."""
        for text in texts:
            self.add_private("your messages", text)
            self._owner_words.append(text)

    @property
    def owner_hosts(self) -> set[str]:
        """The hosts the owner's words name."""
        self._read_owner_words()
        return self._owner_hosts

    @property
    def owner_urls(self) -> dict[str, str]:
        """The normal form of the URLs the owner gave, per host."""
        self._read_owner_words()
        return self._owner_urls

    def _read_owner_words(self) -> None:
        for text in self._owner_words:
            self._owner_hosts.update(named_hosts(text))
            for url in _URL.findall(text):
                host = url_host(url)
                self._owner_urls[host] = self._owner_urls.get(host, "") + "\0" + normalize(url)
        self._owner_words.clear()

    async def find(self, payload: str) -> list[Hit]:
        """Private pieces in `payload`; indexes what arrived since the last look first."""
        while self._pending:
            source, text = self._pending.pop(0)
            self._pending_chars -= len(text)
            for start in range(0, len(text), _SLICE):
                self._index.add(source, text[max(0, start - _OVERLAP) : start + _SLICE])
                await asyncio.sleep(0)
        return self._index.find(payload_forms(payload))

    def seen_from(self, origin: str) -> str:
        """The normal form of everything untrusted that came from `origin`."""
        cached = self._normal_seen.get(origin)
        if cached is None:
            cached = self._normal_seen[origin] = "\0".join(
                normalize(text) for text in self.seen.get(origin, ())
            )
        return cached

    def is_link(self, url: str) -> bool:
        """Whether `url` is in untrusted text: as written anywhere, or as a path on its host."""
        url = url.strip().split("#", 1)[0]
        if any(url in text for texts in self.seen.values() for text in texts):
            return True
        parts = urlsplit(url)
        tail = parts.path + (f"?{parts.query}" if parts.query else "")
        host = (parts.hostname or "").lower()
        return len(tail) > 1 and any(tail in text for text in self.seen.get(host, ()))
