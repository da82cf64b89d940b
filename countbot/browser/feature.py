"""The browser as a runtime feature: the `browser` tool, and the daemon-owned Chromium behind it.

The daemon opens its runtime with a `BrowserFeature`: the host (which starts Chromium only at
the first action) is made when the runtime opens, the tool is offered with the turn machinery,
and `close` ends the browser with the daemon. Nothing of the browser is imported or started
before the first turn builds the tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from countbot.runtime.features import FeaturePorts, SharedPorts
from countbot.runtime.sensitive import private_paths

if TYPE_CHECKING:
    from countbot.browser.host import BrowserHost
    from countbot.tools.base import Tool


class BrowserFeature:
    """Implements `runtime.features.Feature`; `close` stops the browser with the daemon."""

    def __init__(self) -> None:
        self.host: BrowserHost | None = None

    def bind(self, ports: SharedPorts) -> None:
        """Nothing to bind: the browser starts at its first action, not with the runtime."""

    def tools(self, ports: FeaturePorts) -> Sequence[Tool]:
        settings = ports.settings
        if not settings.tools.browser.enabled:
            return []
        from countbot.browser.host import BrowserHost, HostPlan
        from countbot.browser.tool import BrowserTool
        from countbot.tools.workspace_guard import WorkspaceGuard

        web = settings.tools.web
        # The instance's data, the workspace, the config files and every other agent's house.
        hidden = [settings.data_dir, settings.workspace, *private_paths(settings)]
        self.host = BrowserHost(
            settings.tools.browser,
            HostPlan(
                folder=settings.data_dir / "browser",
                workspace=WorkspaceGuard(settings.workspace),
                allow_private=lambda: web.allow_private,
                sandbox=settings.tools.exec.sandbox,
                hidden=tuple(hidden),
            ),
        )
        return [BrowserTool(self.host)]

    async def close(self) -> None:
        """Stop the browser and all its processes (the daemon is stopping)."""
        if self.host is not None:
            await self.host.close()
