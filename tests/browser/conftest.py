"""One Chromium for the browser tests of a module (its start is the expensive part), the test
site on loopback, and a helper that runs the `browser` tool as a turn would."""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from countbot.browser.host import BrowserHost, HostPlan
from countbot.browser.tool import BrowserTool
from countbot.config.settings import BrowserSettings
from countbot.tools.base import ToolContext, ToolResult
from countbot.tools.workspace_guard import WorkspaceGuard
from tests.browser.site import LoopbackSite

needs_chromium = pytest.mark.skipif(
    shutil.which("chromium") is None, reason="tests/run.sh installs Debian's chromium"
)


@pytest.fixture(scope="module")
def site() -> Iterator[LoopbackSite]:
    made = LoopbackSite()
    try:
        yield made
    finally:
        made.close()


@pytest.fixture(scope="module")
def other_origins() -> Iterator[tuple[LoopbackSite, LoopbackSite]]:
    """The same pages from another site (127.0.0.2: Chromium runs its frames in a process of
    their own) and from another origin of the tests' site (another port: the same process)."""
    sites = (LoopbackSite("127.0.0.2"), LoopbackSite())
    try:
        yield sites
    finally:
        for made in sites:
            made.close()


@dataclass
class Browse:
    """The tool as one conversation uses it; `ref` finds a reference in the last result."""

    tool: BrowserTool
    host: BrowserHost
    workspace: Path
    session: str = "s1"
    last: ToolResult | None = None

    async def __call__(self, action: str, **args: Any) -> ToolResult:
        ctx = ToolContext(self.session, self.workspace)
        self.last = await self.tool.execute({"action": action, **args}, ctx)
        return self.last

    def ref(self, name: str) -> str:
        """The reference of the element named `name` in the last result."""
        assert self.last is not None
        match = re.search(rf'"{re.escape(name)}" \[(e\d+)\]', self.last.content)
        assert match, f"no element {name!r} in:\n{self.last.content}"
        return match.group(1)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_host(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[BrowserHost]:
    folder = tmp_path_factory.mktemp("browser")
    (folder / "workspace").mkdir()
    host = BrowserHost(
        BrowserSettings(action_timeout=10, max_download_bytes=1_000_000),
        HostPlan(folder / "data", WorkspaceGuard(folder / "workspace"), lambda: True),
    )
    try:
        yield host
    finally:
        await host.close()


@pytest_asyncio.fixture(loop_scope="module")
async def browse(shared_host: BrowserHost, request: pytest.FixtureRequest) -> AsyncIterator[Browse]:
    """A conversation of its own (its own tab) in the shared browser; its tabs closed after."""
    workspace = shared_host.plan.workspace.workspace
    conversation = Browse(BrowserTool(shared_host), shared_host, workspace, request.node.name)
    try:
        yield conversation
    finally:
        while await shared_host.current(conversation.session) is not None:
            await shared_host.close_tab(conversation.session)
