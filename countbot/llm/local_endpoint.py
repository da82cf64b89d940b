"""A model server CountBot runs itself, as the direct provider sees it.

The server lives in `countbot.local_model` (it reads settings and starts a child process); the
provider only needs its current address, its key and, after a dropped connection, whether it died.
"""

from __future__ import annotations

from typing import Protocol


class LocalServerError(RuntimeError):
    """The local server could not be started or stopped mid-answer; said in words."""


class LocalEndpoint(Protocol):
    """The child server of a `local/` model (`countbot.local_model.server.LocalServer`)."""

    api_key: str

    async def url(self) -> str:
        """The base URL of its OpenAI-compatible API (`.../v1`), started if needed; a request
        begins (the server is not stopped for idleness until its `done()`)."""
        ...

    def done(self) -> None:
        """The request that `url()` began has ended."""
        ...

    async def exit_code(self, wait: float = 1.0) -> int | None:
        """The exit code if it died (within `wait` seconds), else None."""
        ...
