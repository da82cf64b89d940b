"""Every page at desktop and phone width, in English and Chinese: nothing is wider than the
screen (measured in the browser, not eyeballed), so every control can be reached without the
page scrolling sideways."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from tests.e2e.conftest import CHROMIUM, WAIT_MS
from tests.e2e.ui import ARTIFACTS, ChatPage
from tests.web.conftest import Daemon

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)

ROUTES = (
    "chat",
    "settings",
    "memory",
    "skills",
    "audit",
    "usage",
    "cron",
    "subagents",
    "triggers",
    "channels",
)
SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
LOCALES = ("en-US", "zh-CN")
# A note with a line of code no screen is wide enough for, found by the memory search.
CODE = "`" + "configure_the_assistant_" * 8 + "()`"

# Elements whose right edge is past the screen, and boxes that scroll sideways: only a block of
# code may scroll inside its own box (and must itself fit); a page, a panel or a card may not.
_OVERFLOWING = """
() => {
  const width = document.documentElement.clientWidth;
  const fits = (el) => el.getBoundingClientRect().right <= width + 1;
  const inCode = (el) => {
    const code = el.closest("pre");
    return code !== null && code !== el ? fits(code) : false;
  };
  const name = (el) => el.dataset.testid ? `[data-testid=${el.dataset.testid}]`
    : `${el.tagName.toLowerCase()}${el.className ? "." + String(el.className).split(" ")[0] : ""}`;
  const wide = [];
  for (const el of document.querySelectorAll("body *")) {
    if (!el.getClientRects().length || getComputedStyle(el).visibility === "hidden") continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    if (!fits(el) && !inCode(el)) {
      wide.push(`${name(el)} right=${Math.round(box.right)}`);
    } else if (el.tagName !== "PRE" && el.scrollWidth > el.clientWidth + 1 && !inCode(el)
      && ["auto", "scroll"].includes(getComputedStyle(el).overflowX)) {
      wide.push(`${name(el)} scrolls sideways: ${el.scrollWidth} > ${el.clientWidth}`);
    }
  }
  const page = document.documentElement.scrollWidth;
  if (page > width + 1) wide.unshift(`the page scrolls sideways: ${page} > ${width}`);
  return wide.slice(0, 8);
}
"""


async def _instance_with_content(daemon: Daemon) -> None:
    """A job, a note with long code and a past conversation: what makes pages wide."""
    workspace = Path(daemon.settings.workspace)
    (workspace / "MEMORY.md").write_text(f"- Setup needs {CODE} once a week\n", encoding="utf-8")
    job = {
        "name": "Morning digest of everything that happened overnight in the team's channels",
        "prompt": "Summarize the night",
        "schedule": {"kind": "cron", "value": "0 8 * * 1-5", "timezone": "Europe/Berlin"},
        "deliver_to": "web",
    }
    async with daemon.http() as http:
        assert (await http.post("/api/cron/jobs", json=job)).status_code in (200, 201)


async def _visit(page: Page, route: str) -> None:
    await page.goto(f"{page.url.split('#')[0]}#/{route}")
    if route == "memory":
        search = page.get_by_test_id("memory-search-input")
        await search.fill("configure_the_assistant")
        await search.press("Enter")
        await expect(page.get_by_test_id("memory-hit").first).to_be_visible()
    elif route == "cron":
        await expect(page.get_by_test_id("cron-item").first).to_be_visible()
    elif route == "channels":
        await expect(page.get_by_test_id("channel-item").first).to_be_visible()
    await page.wait_for_timeout(300)  # late layout: fonts, a list's second paint


async def test_no_page_is_wider_than_the_screen(browser: Browser, daemon: Daemon) -> None:
    await _instance_with_content(daemon)
    found: dict[str, list[str]] = {}
    for locale in LOCALES:
        for size, viewport in SIZES.items():
            context = await browser.new_context(viewport=viewport, locale=locale, has_touch=True)
            context.set_default_timeout(WAIT_MS)
            ui = ChatPage(await context.new_page(), daemon)
            try:
                await ui.open()
                for route in ROUTES:
                    await _visit(ui.page, route)
                    wide = await ui.page.evaluate(_OVERFLOWING)
                    if wide:
                        found[f"{route} {size} {locale}"] = wide
                    if wide or size == "phone":  # to be looked at
                        ARTIFACTS.mkdir(exist_ok=True)
                        shot = ARTIFACTS / f"width_{route}_{size}_{locale}.png"
                        await ui.page.screenshot(path=str(shot), full_page=True)
                assert not ui.errors, ui.errors
            finally:
                await context.close()
    assert not found, "\n".join(f"{where}: {'; '.join(wide)}" for where, wide in found.items())
