"""The browser UI's first load on loopback, and its size.

Run `python bench/ui_load.py` from the repository root (needs Debian's chromium and Playwright,
the test extra). A real daemon serves in this process, with a scripted model; for each of
`RUNS` fresh browser profiles (nothing cached) it times, from navigation start, the page's
DOMContentLoaded, its load event and the moment the UI's WebSocket is connected (the chat is
usable: the connection indicator says "open"). The baseline, timed the same way in the same
run, is navigating to `/api/health` (one small JSON response: the browser's and the loopback's
own floor). The size table counts what the page fetched on that first load, by type.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.async_api import Browser, Response

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RUNS = 7
TARGET_MS = 1000.0
CHROMIUM = "/usr/bin/chromium"


async def measure(base: str) -> tuple[dict[str, list[float]], dict[str, list[int]]]:
    """Per-run times (ms) of the UI's milestones and the baseline; bytes fetched by kind."""
    from playwright.async_api import async_playwright

    from tests.e2e.conftest import CHROMIUM_ARGS

    times: dict[str, list[float]] = defaultdict(list)
    sizes: dict[str, list[int]] = defaultdict(list)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for run in range(RUNS + 1):  # the first run warms the daemon and is not counted
            times_now, sizes_now = await _one_load(browser, base)
            if run == 0:
                continue
            for key, value in times_now.items():
                times[key].append(value)
            sizes = sizes_now
        await browser.close()
    return times, sizes


async def _one_load(browser: Browser, base: str) -> tuple[dict[str, float], dict[str, list[int]]]:
    context = await browser.new_context()
    page = await context.new_page()
    fetched: dict[str, list[int]] = defaultdict(list)

    async def count(response: Response) -> None:
        if response.url.startswith(base) and not response.url.startswith(f"{base}/api/"):
            kind = _kind(response.url, response.headers.get("content-type", ""))
            fetched[kind].append(len(await response.body()))

    page.on("response", lambda response: asyncio.ensure_future(count(response)))
    await page.goto(f"{base}/api/health")
    baseline = await page.evaluate("performance.getEntriesByType('navigation')[0].responseEnd")
    await page.goto(f"{base}/")
    await page.wait_for_selector('[data-testid="conn-state"][data-state="open"]', timeout=30_000)
    usable = await page.evaluate("performance.now()")
    nav = await page.evaluate(
        "(() => { const n = performance.getEntriesByType('navigation')[0];"
        " return [n.domContentLoadedEventEnd, n.loadEventEnd]; })()"
    )
    await asyncio.sleep(0.2)  # the last bodies are counted
    await context.close()
    return (
        {"baseline": baseline, "dom": nav[0], "load": nav[1], "usable": usable},
        dict(fetched),
    )


def _kind(url: str, content_type: str) -> str:
    path = url.split("?")[0]
    for suffix, kind in ((".js", "JS"), (".css", "CSS"), (".svg", "images")):
        if path.endswith(suffix):
            return kind
    return "HTML" if "html" in content_type else "other"


def report(times: dict[str, list[float]], sizes: dict[str, list[int]]) -> None:
    base = statistics.median(times["baseline"])
    print(f"UI first load on loopback, fresh browser profile, median of {RUNS} runs")
    print(f"{'milestone':<34}{'median ms':>10}{'max ms':>9}{'x baseline':>12}")
    labels = {
        "baseline": "baseline: GET /api/health",
        "dom": "DOMContentLoaded",
        "load": "load event (all modules)",
        "usable": "usable (WebSocket open)",
    }
    for key, label in labels.items():
        median = statistics.median(times[key])
        print(f"{label:<34}{median:>10.1f}{max(times[key]):>9.1f}{median / base:>12.1f}")
    usable = statistics.median(times["usable"])
    verdict = "within" if usable < TARGET_MS else "OVER"
    print(f"target: usable under {TARGET_MS:.0f} ms: {verdict}")
    print()
    print("UI size: what the first load fetched")
    print(f"{'kind':<10}{'files':>7}{'bytes':>10}")
    for kind in sorted(sizes):
        print(f"{kind:<10}{len(sizes[kind]):>7}{sum(sizes[kind]):>10,}")
    total = sum(sum(v) for v in sizes.values())
    print(f"{'total':<10}{sum(len(v) for v in sizes.values()):>7}{total:>10,}")


async def main() -> None:
    from countbot.config.loader import load_settings
    from countbot.web.daemon import bind_listener, serve_daemon
    from tests.support.scripted_model import ScriptedModelServer
    from tests.web.conftest import write_config

    with ScriptedModelServer() as model, tempfile.TemporaryDirectory() as folder:
        settings = load_settings(write_config(Path(folder), model))
        with bind_listener("127.0.0.1", 0) as listener:
            async with serve_daemon(settings, listener) as running:
                times, sizes = await measure(f"http://127.0.0.1:{running.port}")
    report(times, sizes)


if __name__ == "__main__":
    asyncio.run(main())
