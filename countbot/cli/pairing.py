"""`countbot pairing`: let a chat user who asked for access talk to the assistant.

It works on the store directly, so it acts at once whether or not the daemon is running: a
running daemon reads paired senders from the same SQLite file on the sender's next message.
"""

from __future__ import annotations

import time
from datetime import datetime

from countbot.config.settings import Settings
from countbot.store.database import Database
from countbot.store.pairing import PairingStore


async def approve_code(settings: Settings, channel: str, code: str) -> tuple[int, str]:
    """Pair the sender holding `code`; returns the exit status and the line to print."""
    known = settings.channels.names()
    if channel not in known:
        return 2, f"countbot: unknown channel {channel!r} (known: {', '.join(known)})"
    db = await Database.open(settings.data_dir / "countbot.db")
    try:
        paired = await PairingStore(db).approve(channel, code, time.time())
    finally:
        await db.close()
    if paired is None:
        return 1, (
            f"countbot: no pending {channel} pairing code {code.upper()!r}. Codes expire after an "
            "hour; the sender gets a new one by writing to the bot again."
        )
    return 0, f"Paired {channel} user {paired.sender.describe()}: they can talk to you now."


async def listing(settings: Settings) -> list[str]:
    """Pending codes, then paired senders, one per line."""
    db = await Database.open(settings.data_dir / "countbot.db")
    try:
        store = PairingStore(db)
        pending, paired = await store.pending(time.time()), await store.paired()
    finally:
        await db.close()
    lines = ["Waiting for approval:" if pending else "No pairing codes are waiting."]
    lines += [
        f"  {r.channel} {r.code}  {r.sender.describe()}  (asked {_when(r.created_at)})"
        for r in pending
    ]
    lines.append("Paired:" if paired else "Nobody has been paired yet.")
    lines += [
        f"  {p.channel}  {p.sender.describe()}  (since {_when(p.approved_at)})" for p in paired
    ]
    return lines


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")
