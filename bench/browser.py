"""The browser tool's cost: the daemon's own time per action beside a raw CDP client doing the
same on the same Chromium (the floor, in the same run), the first snapshot after a cold start
beside a raw client's first page text (the floor, taken in turns with it), the snapshot's size
against the page, memory with the browser idle and after it is closed, and start / act /
cancel / `kill -9` cycles that must leave no process and no stale lock.

    python bench/browser.py [--reps 15] [--cold 10] [--cycles 20] [--only cycles ...]

Pages come from the tests' loopback site (tests/browser/site.py); nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from countbot.browser.chromium import LaunchPlan, find_chromium, launch  # noqa: E402
from countbot.browser.host import BrowserHost  # noqa: E402
from countbot.browser.snapshot import approx_tokens  # noqa: E402
from countbot.browser.tab import Tab  # noqa: E402
from countbot.browser.tool import BrowserTool  # noqa: E402
from countbot.tools.base import ToolContext  # noqa: E402
from tests.browser.holder import host_in  # noqa: E402
from tests.browser.site import LoopbackSite  # noqa: E402

FORM = (
    "<html><body><input id='q' aria-label='Query'><button id='b' "
    "onclick=\"document.body.insertAdjacentHTML('beforeend','<p>clicked</p>')\">Go</button>"
    "</body></html>"
)


async def timed(work: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await work()
    return (time.perf_counter() - start) * 1000


async def raw_actions(tab: Tab, url: str) -> dict[str, Callable[[], Awaitable[Any]]]:
    """The same actions as bare CDP commands: what Chromium itself takes."""

    async def open_page() -> None:
        loaded = asyncio.Event()
        stop = tab.cdp.listen(
            lambda method, _, session: (
                loaded.set() if method == "Page.loadEventFired" and session == tab.session else None
            )
        )
        await tab.send("Page.navigate", {"url": url})
        await loaded.wait()
        stop()

    async def read() -> None:
        await tab.send(
            "Runtime.evaluate", {"expression": "document.body.innerText", "returnByValue": True}
        )

    async def click() -> None:
        for kind in ("mousePressed", "mouseReleased"):
            await tab.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": 200, "y": 12, "button": "left", "clickCount": 1},
            )

    async def type_text() -> None:
        await tab.send("Runtime.evaluate", {"expression": "document.getElementById('q').focus()"})
        await tab.send("Input.insertText", {"text": "hello"})

    return {"open": open_page, "snapshot": read, "click": click, "type": type_text}


async def per_action(site: LoopbackSite, folder: Path, reps: int) -> list[tuple[str, float, float]]:
    host = host_in(folder / "actions")
    tool, ctx = BrowserTool(host), ToolContext("bench", folder)
    url = site.url("/form")

    async def ours(action: str, **args: Any) -> None:
        result = await tool.execute({"action": action, **args}, ctx)
        assert result.status == "ok", result.content

    try:
        await ours("open", url=url)
        tab = await host.current("bench")
        assert tab is not None
        raw = await raw_actions(tab, url)
        rows = []
        for action in ("open", "snapshot", "click", "type"):
            mine, floor = [], []
            for _ in range(reps):
                if action in ("click", "type"):
                    await ours("snapshot")
                ref = {"click": "Go", "type": "Query"}.get(action)
                args: dict[str, Any] = {"url": url} if action == "open" else {}
                if ref:
                    last = (await tool.execute({"action": "snapshot"}, ctx)).content
                    args["ref"] = last.split(f'"{ref}" [')[1].split("]")[0]
                if action == "type":
                    args["text"] = "hello"
                mine.append(await timed(lambda a=action, k=args: ours(a, **k)))
                floor.append(await timed(raw[action]))
            rows.append((action, statistics.median(mine), statistics.median(floor)))
        return rows
    finally:
        await host.close()


async def cold_starts(site: LoopbackSite, folder: Path, runs: int) -> dict[str, list[float]]:
    """From nothing running to the first `open`'s result, each on a new profile; in turns with
    the floor: Chromium started the same way by a bare client that opens the page in the tab
    Chromium starts with and reads its text once it has loaded."""
    times: dict[str, list[float]] = {"browser tool": [], "raw CDP (floor)": []}
    for run in range(runs):
        host = host_in(folder / f"cold{run}")
        tool = BrowserTool(host)
        try:
            start = time.perf_counter()
            result = await tool.execute(
                {"action": "open", "url": site.url("/list")}, ToolContext("c", folder)
            )
            times["browser tool"].append((time.perf_counter() - start) * 1000)
            assert "# Fruit" in result.content
        finally:
            await host.close()
        times["raw CDP (floor)"].append(await raw_cold(site.url("/list"), folder / f"raw{run}"))
    return times


async def raw_cold(url: str, folder: Path) -> float:
    executable = find_chromium("")
    assert executable is not None
    (folder / "profile").mkdir(parents=True)
    plan = LaunchPlan(executable, folder / "profile", True, folder / "log", folder / "pid")
    start = time.perf_counter()
    chromium = await launch(plan)
    try:
        cdp = chromium.cdp
        pages = await cdp.send("Target.getTargets", {"filter": [{"type": "page"}]})
        target = pages["targetInfos"][0]["targetId"]
        session = (await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True}))[
            "sessionId"
        ]
        loaded = asyncio.Event()
        cdp.listen(lambda method, _, s: loaded.set() if method == "Page.loadEventFired" else None)
        await cdp.send("Page.enable", session=session)
        await cdp.send("Page.navigate", {"url": url}, session)
        await loaded.wait()
        text = await cdp.send(
            "Runtime.evaluate",
            {"expression": "document.body.innerText", "returnByValue": True},
            session,
        )
        assert "Fruit" in text["result"]["value"]
        return (time.perf_counter() - start) * 1000
    finally:
        await chromium.stop()


async def snapshot_size(site: LoopbackSite, folder: Path) -> dict[str, int]:
    host = host_in(folder / "size")
    tool, ctx = BrowserTool(host), ToolContext("s", folder)
    try:
        first = await tool.execute({"action": "open", "url": site.url("/long")}, ctx)
        tab = await host.current("s")
        assert tab is not None and tab.snapshot is not None
        text = await tab.call("pageText")
        html = site.pages["/long"]
        return {
            "page HTML": approx_tokens(html),
            "page text (innerText)": approx_tokens(text),
            "whole snapshot (all parts)": approx_tokens("\n".join(tab.snapshot[1])),
            "one result (part 1 with header)": approx_tokens(first.content),
        }
    finally:
        await host.close()


def pss_kib(pids: list[int]) -> int:
    """Proportional set size: shared pages counted once across the browser's processes."""
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_bytes()
            except OSError:
                continue
            if int(stat[stat.rindex(b")") + 2 :].split()[2]) == pgid:
                members.append(int(entry.name))
    return members


async def memory(site: LoopbackSite, folder: Path) -> list[tuple[str, int, int]]:
    host = host_in(folder / "memory")
    tool = BrowserTool(host)
    before = pss_kib([os.getpid()])
    await tool.execute({"action": "open", "url": site.url("/long")}, ToolContext("m", folder))
    assert host.chromium is not None
    group = host.chromium.process.pid
    await asyncio.sleep(1)
    idle = pss_kib([os.getpid()]), pss_kib(group_members(group))
    await host.stop()
    await asyncio.sleep(1)
    reaped = pss_kib([os.getpid()]), pss_kib(group_members(group))
    return [
        ("before the first action", before, 0),
        ("browser open, idle", *idle),
        ("after it is closed (reaped)", *reaped),
    ]


async def cycles(site: LoopbackSite, folder: Path, count: int) -> tuple[int, int, int]:
    """Start, act, cancel mid-navigation, then kill -9 the process holding the browser with a
    navigation under way (tests/browser/holder.py), on the same profile each time; count
    leftover browser processes and starts that failed (a stale lock would fail the next)."""
    leftovers = failures = 0
    marker = str(folder / "cycles" / "data" / "profile")
    for done in range(count):
        holder = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.browser.holder", str(folder / "cycles"),
            site.url("/list"), site.url("/slow"), cwd=ROOT, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert holder.stdout is not None
        line = await holder.stdout.readline()
        if not line.strip():
            failures += 1
        holder.kill()
        await holder.wait()
        for _ in range(100):
            alive = [p for p in _profile_processes(marker)]
            if not alive:
                break
            await asyncio.sleep(0.1)
        leftovers += len(_profile_processes(marker))
        if (done + 1) % 50 == 0:
            print(f"  {done + 1} cycles: {leftovers} left over, {failures} failed", flush=True)
    host: BrowserHost = host_in(folder / "cycles")
    try:
        result = await BrowserTool(host).execute(
            {"action": "open", "url": site.url("/")}, ToolContext("x", folder)
        )
        if result.status != "ok":
            failures += 1
        task = asyncio.ensure_future(
            BrowserTool(host).execute(
                {"action": "open", "url": site.url("/slow")}, ToolContext("x", folder)
            )
        )
        await asyncio.sleep(0.3)
        task.cancel()  # a cancelled turn mid-navigation
        await asyncio.gather(task, return_exceptions=True)
    finally:
        await host.close()
    leftovers += len(_profile_processes(marker))
    return count, leftovers, failures


def _profile_processes(marker: str) -> list[int]:
    flag = f"--user-data-dir={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if flag in (entry / "cmdline").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


SECTIONS = ("actions", "cold", "size", "memory", "cycles")


async def main(options: argparse.Namespace) -> None:
    site = LoopbackSite()
    site.pages["/form"] = FORM
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        if "actions" in options.only:
            print(f"## Per action, median of {options.reps} (ms)\n")
            print("| action | browser tool | raw CDP | ratio |\n|---|---:|---:|---:|")
            for action, mine, floor in await per_action(site, folder, options.reps):
                print(f"| {action} | {mine:.1f} | {floor:.1f} | {mine / floor:.1f}x |")
        if "cold" in options.only:
            starts = await cold_starts(site, folder, options.cold)
            print(f"\n## First snapshot after a cold start, {options.cold} runs each (ms)\n")
            print("| from nothing to the page's text | p50 | p95 | max |\n|---|---:|---:|---:|")
            for what, times in starts.items():
                print(f"| {what} | {percentile(times, 0.5):.0f} | {percentile(times, 0.95):.0f} |"
                      f" {max(times):.0f} |")  # fmt: skip
        if "size" in options.only:
            print("\n## Snapshot of a long page (approximate tokens)\n")
            print("| what | tokens |\n|---|---:|")
            for what, tokens in (await snapshot_size(site, folder)).items():
                print(f"| {what} | {tokens:,} |")
        if "memory" in options.only:
            print("\n## Memory (PSS, MiB)\n")
            print("| state | this process | browser processes |\n|---|---:|---:|")
            for state, own, browser in await memory(site, folder):
                print(f"| {state} | {own / 1024:.1f} | {browser / 1024:.1f} |")
        if "cycles" in options.only:
            done, leftovers, failures = await cycles(site, folder, options.cycles)
            print(f"\n## {done} start / act / cancel / kill -9 cycles, then a start and a cancel\n")
            print(f"leftover browser processes: {leftovers}; starts that failed: {failures}")
    site.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--cold", type=int, default=10)
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    asyncio.run(main(parser.parse_args()))
