"""Run as a separate process: wait for a start signal, then append numbered lines to MEMORY.md.

Used by the concurrency test to show that two processes appending at once lose nothing.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from countbot.memory.memory_file import MemoryFile


async def append_all(path: Path, prefix: str, count: int) -> None:
    memory = MemoryFile(path)
    await asyncio.gather(*(memory.append(f"{prefix}-{i}") for i in range(count)))


if __name__ == "__main__":
    go = Path(sys.argv[4])
    while not go.exists():  # both workers start appending at the same moment
        time.sleep(0.001)
    asyncio.run(append_all(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
