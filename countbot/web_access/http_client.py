"""The one httpx client the web tools of a daemon share, built at their first call off the loop.

Building a client loads the CA bundle from disk (CPU time and memory), so the web tools share one
per runtime (`WebClient`), made in a worker thread at the first fetch or search and closed with the
runtime. The same thread imports what the first request would otherwise import on the event loop:
anyio and its asyncio backend (httpcore's network layer) and the page-to-text converter
(`countbot.text.html_text`). An idle daemon holds none of it.

Nothing of one call may reach the next through the shared client, so it holds no setting: every
request carries its own timeout and headers (a settings change applies at the next call), it
keeps no cookies, and it keeps no connection alive once a response is read. `web_fetch`
connects to a checked IP address and sends the host name as Host and TLS SNI; a kept
connection would serve another host name at the same address over TLS verified for the first.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx


class WebClientClosed(RuntimeError):
    """The runtime closed its web client (the daemon is stopping)."""


class WebClient:
    """The web tools' shared client: `get()` builds it once, `aclose()` closes it for good."""

    def __init__(self) -> None:
        self._client: httpx.AsyncClient | None = None
        self._made = asyncio.Lock()  # concurrent first calls share one client
        self._closed = False

    async def get(self) -> httpx.AsyncClient:
        """The client, built in a worker thread at the first call."""
        if self._client is None:
            async with self._made:
                if self._closed:
                    raise WebClientClosed("the daemon is stopping")
                if self._client is None:
                    self._client = await asyncio.to_thread(_new_client)
        return self._client

    async def aclose(self) -> None:
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


def _new_client() -> httpx.AsyncClient:
    """The shared client, with what its first request needs loaded (blocking: a worker thread)."""
    from http.cookiejar import CookieJar, DefaultCookiePolicy

    import httpx

    # What its first request and the page-to-text converter import: loaded with the client.
    import countbot.text.html_text  # noqa: F401
    from countbot.speedups.warm_imports import HTTPX_FIRST_REQUEST, warm

    warm(HTTPX_FIRST_REQUEST)
    no_cookies = CookieJar(DefaultCookiePolicy(allowed_domains=[]))
    return httpx.AsyncClient(
        cookies=no_cookies,
        limits=httpx.Limits(max_keepalive_connections=0),
        trust_env=True,  # proxies from the environment, as the client of each call had
    )
