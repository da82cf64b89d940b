"""`countbot ...` run the way a user runs it: a subprocess on a given config file."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

COUNTBOT = [sys.executable, "-m", "countbot"]


async def countbot(*args: str, config: Path, unset: tuple[str, ...] = ()) -> tuple[int, str, str]:
    """Run `countbot ARGS --config CONFIG` without $COUNTBOT_CONFIG and the `unset` variables."""
    env = {k: v for k, v in os.environ.items() if k != "COUNTBOT_CONFIG" and k not in unset}
    process = await asyncio.create_subprocess_exec(
        *COUNTBOT,
        *args,
        "--config",
        str(config),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)  # a loaded CI machine
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()
