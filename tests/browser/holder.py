"""A process that holds a browser open, to be killed with `kill -9` by a test (the daemon's
death): `python -m tests.browser.holder <folder> <url> [<slow url>]` opens `url`, then, given a
slow page, opens it and cancels that mid-navigation (a turn cancelled), and opens it again; it
prints the browser's pid (with the slow page's navigation under way), then waits."""

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


async def hold(folder: Path, url: str, slow: str = "") -> None:
    host = host_in(folder)
    tool, ctx = BrowserTool(host), ToolContext("held", folder / "workspace")
    result = await tool.execute({"action": "open", "url": url}, ctx)
    assert host.chromium is not None, result.content
    if slow:
        cancelled = asyncio.ensure_future(tool.execute({"action": "open", "url": slow}, ctx))
        await asyncio.sleep(0.2)
        cancelled.cancel()
        await asyncio.gather(cancelled, return_exceptions=True)
        under_way = asyncio.ensure_future(tool.execute({"action": "open", "url": slow}, ctx))
        await asyncio.sleep(0.1)
    print(host.chromium.process.pid, flush=True)
    await asyncio.sleep(3600)
    if slow:
        await under_way


if __name__ == "__main__":
    asyncio.run(hold(Path(sys.argv[1]), *sys.argv[2:4]))
