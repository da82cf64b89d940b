"""The delivery path's delivery into one chat, the same on every platform: the text split at the
platform's limit, then the files, each retried as the platform allows. The result counts only
what the platform accepted, and says how much arrived when it stopped part way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Protocol

import aiofiles

from countbot.channels.kit.base import ChatOutput, SendError
from countbot.channels.kit.retry import send_retrying
from countbot.channels.kit.splitting import split_markdown
from countbot.runtime.deliveries import DeliveryResult


class FileChat(ChatOutput, Protocol):
    """A chat that can also receive files (what the `message` tool sends)."""

    async def send_file(self, path: Path) -> str:
        """Upload one workspace file; returns the platform's message id."""
        ...


async def deliver(
    chat: FileChat, platform: str, text: str, files: Sequence[Path], limit: int
) -> DeliveryResult:
    """Send `text` (Markdown) in pieces of at most `limit`, then `files`, in order."""
    pieces = split_markdown(text, limit) if text.strip() else []
    sends: list[Callable[[], Awaitable[str]]] = [
        *(lambda piece=piece: chat.post(piece) for piece in pieces),
        *(lambda path=path: chat.send_file(path) for path in files),
    ]
    delivered: list[str] = []
    for send in sends:
        try:
            delivered.append(await send_retrying(send))
        except SendError as exc:
            done = f" ({len(delivered)} of {len(sends)} messages were sent)" if delivered else ""
            detail = f"{platform} refused: {exc.detail}{done}"
            return DeliveryResult(False, detail, tuple(delivered), not exc.permanent)
    return DeliveryResult(True, f"sent {len(delivered)} message(s)", tuple(delivered))


async def read_upload(path: Path) -> bytes:
    """A file's bytes for an upload; an unreadable file is a permanent `SendError`."""
    try:
        async with aiofiles.open(path, "rb") as handle:
            return await handle.read()
    except OSError as exc:
        raise SendError(f"cannot read {path.name}: {exc.strerror or exc}", permanent=True) from exc
