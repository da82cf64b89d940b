"""A process that holds a browser open, to be killed with `kill -9` by a test (the daemon's
death): `python -m tests.browser.holder <folder> <url>` prints the browser's pid, then waits."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from countbot.browser.host import BrowserHost, HostPlan
from countbot.browser.tool import BrowserTool
from countbot.config.settings import BrowserSettings
from countbot.tools.base import ToolContext
from countbot.tools.workspace_guard import WorkspaceGuard


def host_in(folder: Path, idle_minutes: float = 10.0) -> BrowserHost:
    """A browser host keeping its data in `folder` (the same one across processes)."""
    (folder / "workspace").mkdir(parents=True, exist_ok=True)
    return BrowserHost(
        BrowserSettings(action_timeout=15, idle_minutes=idle_minutes),
        HostPlan(folder / "data", WorkspaceGuard(folder / "workspace"), lambda: True),
    )


async def hold(folder: Path, url: str) -> None:
    host = host_in(folder)
    result = await BrowserTool(host).execute(
        {"action": "open", "url": url}, ToolContext("held", folder / "workspace")
    )
    assert host.chromium is not None, result.content
    print(host.chromium.process.pid, flush=True)
    await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(hold(Path(sys.argv[1]), sys.argv[2]))
