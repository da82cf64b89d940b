"""Where files people send through a channel land: `<workspace>/media/`, where the model's file
tools can read them later.
"""

from __future__ import annotations

import base64
import itertools
import re
import time
from pathlib import Path

import aiofiles
import aiofiles.os

from countbot.llm.types import ImagePart

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
# Images a vision model is shown inline (others are stored and described).
INLINE_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})


class MediaFolder:
    """Saves received files under unique, harmless names."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.root = workspace / "media"

    async def save(self, name: str, data: bytes) -> Path:
        """Write `data` as a new file named after `name` and return its path."""
        await aiofiles.os.makedirs(self.root, exist_ok=True)
        safe = _UNSAFE.sub("_", Path(name).name).strip("._") or "file"
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for attempt in itertools.count():
            path = self.root / (f"{stamp}-{safe}" if not attempt else f"{stamp}-{attempt}-{safe}")
            try:
                async with aiofiles.open(path, "xb") as handle:
                    await handle.write(data)
            except FileExistsError:
                continue
            return path
        raise AssertionError("unreachable: the counter never ends")

    def shown(self, path: Path) -> str:
        """How the model should name the file: relative to the workspace."""
        return path.relative_to(self.workspace).as_posix()


def inline_image(data: bytes, media_type: str) -> ImagePart:
    return ImagePart(media_type=media_type, data=base64.b64encode(data).decode("ascii"))
