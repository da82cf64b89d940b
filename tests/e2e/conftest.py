"""A real daemon (see tests/web/conftest.py) and Debian's chromium, headless, looking at it."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright, expect

from tests.e2e.ui import ChatPage
from tests.web import conftest as web

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
# Generous: the first turn of a daemon also waits for litellm's import, on a loaded 2-core CI
# machine too (an upper bound: a passing step never waits it out).
WAIT_MS = 45_000

# The daemon fixtures, shared with the protocol tests.
start_daemon = web.start_daemon
daemon = web.daemon

expect.set_options(timeout=WAIT_MS)


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def chat(
    browser: Browser, daemon: web.Daemon, request: pytest.FixtureRequest
) -> AsyncIterator[ChatPage]:
    """The UI open in a fresh browser profile; its screenshot is saved when the test ends."""
    context = await browser.new_context(viewport={"width": 1100, "height": 760}, locale="en-US")
    context.set_default_timeout(WAIT_MS)
    ui = ChatPage(await context.new_page(), daemon)
    try:
        await ui.open()
        yield ui
        assert not ui.errors, f"the page threw: {ui.errors}"
    finally:
        await ui.screenshot(re.sub(r"[^\w.-]+", "_", request.node.name))
        await context.close()
