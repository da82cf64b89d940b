"""Who may talk to the assistant on a channel: default deny, allow-lists and pairing codes.

A sender is allowed when `allow_from` names their id or username (or is `["*"]`), or when the
owner approved their pairing code. A stranger in a private chat gets a short code at most once an
hour and no agent turn; in a group they get nothing (a code posted there would help anyone).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from countbot.store.pairing import PairingStore, SenderInfo

# No 0/O, 1/I/L: a code is read off a phone and typed into a terminal.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
OPEN = "*"


@dataclass(frozen=True, slots=True)
class AccessDecision:
    """`reply` is what to tell a sender who is not allowed (None: say nothing)."""

    allowed: bool
    reply: str | None = None


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def pairing_reply(channel: str, code: str) -> str:
    return (
        "Hi! I only talk to people my owner has approved.\n\n"
        f"Your pairing code is `{code}`. Ask my owner to run:\n\n"
        f"`countbot pairing approve {channel} {code}`\n\n"
        "(or approve it on the Channels page of the web UI). The code is valid for one hour."
    )


@dataclass(eq=False)
class AccessControl:
    """One channel's access policy; `allow_from` is read on every check, so edits apply live."""

    channel: str
    allow_from: Callable[[], Sequence[str]]
    pairing: PairingStore
    clock: Callable[[], float] = time.time

    async def allows(self, sender: SenderInfo) -> bool:
        """Open to all, listed or paired: who may start a turn."""
        return self._open() or await self.owns(sender)

    async def owns(self, sender: SenderInfo) -> bool:
        """Admitted one by one (listed by id or name, or paired): their words are the owner's.
        Whoever the open door (`"*"`) alone lets in is a stranger whose text the assistant
        reads (`countbot/dataflow/`)."""
        return self._listed(sender) or await self.pairing.is_paired(self.channel, sender.sender_id)

    async def check(self, sender: SenderInfo, *, private: bool) -> AccessDecision:
        if await self.allows(sender):
            return AccessDecision(True)
        if not private:
            return AccessDecision(False)
        code = await self.pairing.offer(self.channel, sender, new_code, self.clock())
        return AccessDecision(False, pairing_reply(self.channel, code) if code else None)

    def _names(self) -> set[str]:
        return {entry.strip().lstrip("@").lower() for entry in self.allow_from()}

    def _open(self) -> bool:
        return OPEN in self._names()

    def _listed(self, sender: SenderInfo) -> bool:
        names = self._names()
        if sender.sender_id.lower() in names:
            return True
        return sender.username is not None and sender.username.lower() in names
