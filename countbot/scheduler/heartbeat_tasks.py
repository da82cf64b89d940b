"""What HEARTBEAT.md asks for: the task lines a user wrote, nothing from comments or headings.

Reading this must be cheap and certain, because an empty answer is what lets a beat skip the
model entirely.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

HEARTBEAT_FILE = "HEARTBEAT.md"

# A comment runs to its end marker, or to the end of the file when it is never closed.
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)


def heartbeat_tasks(text: str) -> list[str]:
    """The non-empty lines that are neither headings nor inside HTML comments."""
    visible = _COMMENT.sub("", text)
    lines = (line.strip() for line in visible.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


async def read_heartbeat_tasks(workspace: Path) -> list[str]:
    """The tasks in <workspace>/HEARTBEAT.md; none when the file is missing or unreadable."""
    try:
        # A worker thread, as aiofiles would use, without aiofiles in an idle daemon.
        text = await asyncio.to_thread((workspace / HEARTBEAT_FILE).read_text, encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return heartbeat_tasks(text)
