"""The web tools' shared HTTP client, closed after each test as the runtime closes it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from countbot.web_access.http_client import WebClient


@pytest.fixture
async def web_client() -> AsyncIterator[WebClient]:
    client = WebClient()
    try:
        yield client
    finally:
        await client.aclose()
