"""Which addresses the browser may reach: as `web_fetch`, public ones unless
`tools.web.allow_private` says otherwise, for every request a page makes.

Every request of every tab (navigations, redirects, frames, scripts, images, fetches) is paused
by Chromium (`Fetch.enable` on the browser) until this guard has resolved its host and checked
each address; a refused one fails with a reason the action then reports. A page cannot reach the
user's router or a local service through the browser, whatever it links or loads.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from countbot.browser.cdp import CdpConnection
from countbot.web_access.address_check import address_refusal

if TYPE_CHECKING:
    from countbot.browser.tab import Tab

_CHECKED = frozenset({"http", "https", "ws", "wss"})
_HARMLESS = frozenset({"data", "blob", "about"})


class AddressGuard:
    """Decides each paused request; see the module docstring."""

    def __init__(self, allow_private: Callable[[], bool]) -> None:
        self._allow_private = allow_private

    async def start(self, cdp: CdpConnection) -> None:
        await cdp.send("Fetch.enable", {"patterns": [{"urlPattern": "*"}]})

    async def decide(
        self, cdp: CdpConnection, params: dict[str, Any], tab_of: Callable[[str], Tab | None]
    ) -> None:
        request_id, url = params["requestId"], params.get("request", {}).get("url", "")
        session = params.get("sessionId")
        reason = await self.refusal(url)
        if reason is None:
            await cdp.send("Fetch.continueRequest", {"requestId": request_id}, session)
            return
        tab = tab_of(params.get("frameId", ""))
        if tab is not None:
            tab.happened.refused.append(f"{url[:200]}: {reason}")
        await cdp.send(
            "Fetch.failRequest",
            {"requestId": request_id, "errorReason": "BlockedByClient"},
            session,
        )

    async def refusal(self, url: str) -> str | None:
        """Why the browser must not request `url`, or None."""
        try:
            parts = urlsplit(url)
            host = parts.hostname or ""
        except ValueError:
            return "not a valid URL"
        scheme = parts.scheme.lower()
        if scheme in _HARMLESS:
            return None
        if scheme not in _CHECKED:
            return f"{scheme}: URLs are not opened"
        if self._allow_private():
            return None
        if not host:
            return "the URL has no host"
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, parts.port or 443, type=socket.SOCK_STREAM
            )
        except (socket.gaierror, ValueError) as exc:
            return f"cannot resolve {host} ({exc})"
        for info in infos:
            refused = address_refusal(str(info[4][0]))
            if refused is not None:
                return (
                    f"{host} resolves to {refused}; only public addresses are opened "
                    "(tools.web.allow_private permits local ones)"
                )
        return None
