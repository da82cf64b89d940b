"""The httpx client of one fetch or search, made in a worker thread (`asyncio.to_thread`).

Building it loads the CA bundle from disk (about 100 ms); the page-to-text converter
(`countbot.html_text`) is imported in the same thread, before the answer arrives. An idle daemon
holds neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx


def new_client(**options: Any) -> httpx.AsyncClient:
    """`httpx.AsyncClient(**options)`, with httpx and the HTML converter loaded (blocking)."""
    import httpx

    import countbot.html_text  # noqa: F401 - loaded here, off the event loop

    return httpx.AsyncClient(**options)
