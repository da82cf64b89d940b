"""The daemon's browser: started on first use, restarted when it died, closed when idle or on stop.

One Chromium per agent profile (`<data_dir>/browser/profile`: logins are kept), one tab per
conversation (a page a conversation opened in a new tab is pushed on that conversation's tabs).
Every page target is attached paused (`Target.setAutoAttach`), so a tab a page opens is set up
(its events, the address guard) before its first request leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from countbot.browser.address_guard import AddressGuard
from countbot.browser.cdp import CdpConnection, CdpError
from countbot.browser.chromium import (
    MISSING,
    BrowserUnavailable,
    Chromium,
    LaunchPlan,
    find_chromium,
    launch,
)
from countbot.browser.jail import jail_argv
from countbot.browser.tab import Tab
from countbot.browser.workspace_files import clean_name, move_in
from countbot.config.settings import BrowserSettings
from countbot.tools.workspace_guard import WorkspaceGuard

log = logging.getLogger(__name__)

DOWNLOADS = "downloads"


@dataclass(frozen=True, slots=True)
class HostPlan:
    """Where the browser lives and what it may reach."""

    folder: Path  # <data_dir>/browser
    workspace: WorkspaceGuard
    # Read at each request: tools.web.allow_private may change while the daemon runs.
    allow_private: Callable[[], bool]
    # tools.exec.sandbox (the browser runs in bwrap where exec does), and what it must not see.
    sandbox: str = "off"
    hidden: tuple[Path, ...] = ()


@dataclass(slots=True)
class _Download:
    tab: Tab
    name: str
    url: str


class BrowserHost:
    """Owns the Chromium process and the tabs; see the module docstring."""

    def __init__(self, settings: BrowserSettings, plan: HostPlan) -> None:
        self.settings = settings
        self.plan = plan
        self.chromium: Chromium | None = None
        # The connection whose events count: set as soon as a browser answers, so the pages
        # it attaches while it is being set up are seen.
        self._live: CdpConnection | None = None
        self._starting = asyncio.Lock()
        self._tabs: dict[str, list[Tab]] = {}
        self._by_session: dict[str, Tab] = {}
        self._attached: dict[str, asyncio.Future[Tab]] = {}
        # The blank page Chromium starts with: the first tab, with no renderer left to start.
        self._first_page: asyncio.Future[Tab] | None = None
        self._downloads: dict[str, _Download] = {}
        self._guard = AddressGuard(plan.allow_private)
        self._last_use = 0.0
        self._busy = 0
        self._idle: asyncio.Task[None] | None = None
        self._exit_note = ""

    # The browser ------------------------------------------------------------------------------

    async def tab(self, conversation: str, *, open_one: bool = True) -> tuple[Tab | None, str]:
        """The conversation's current tab (opened when it has none and `open_one`), with a
        note when the browser had to be started again."""
        note = await self._ensure()
        tabs = [tab for tab in self._tabs.get(conversation, []) if not tab.closed]
        self._tabs[conversation] = tabs
        if not tabs and open_one:
            tabs.append(await self._new_tab())
        return (tabs[-1] if tabs else None), note

    async def current(self, conversation: str) -> Tab | None:
        """The conversation's current tab, without starting anything."""
        tabs = [tab for tab in self._tabs.get(conversation, []) if not tab.closed]
        return tabs[-1] if tabs else None

    async def refusal(self, url: str) -> str | None:
        """Why `url` must not be opened (not http or https, a private address), or None."""
        scheme = url.split(":", 1)[0].lower() if ":" in url else ""
        if scheme not in ("http", "https"):
            return "only http:// and https:// URLs are opened"
        return await self._guard.refusal(url)

    async def close_tab(self, conversation: str) -> Tab | None:
        """Close the conversation's current tab; returns the one shown now, if any."""
        tabs = self._tabs.get(conversation, [])
        if tabs:
            tab = tabs.pop()
            tab.closed = True
            if self.chromium is not None:
                with contextlib.suppress(CdpError):
                    await self.chromium.cdp.send("Target.closeTarget", {"targetId": tab.target_id})
        return tabs[-1] if tabs else None

    @contextlib.asynccontextmanager
    async def using(self) -> AsyncIterator[None]:
        """Marks the browser busy (the idle reaper waits) for the length of one action."""
        self._busy += 1
        try:
            yield
        finally:
            self._busy -= 1
            self._last_use = asyncio.get_running_loop().time()

    async def _ensure(self) -> str:
        async with self._starting:
            chromium = self.chromium
            if chromium is not None and not chromium.cdp.closed.is_set():
                return ""
            note = ""
            if chromium is not None:
                code = chromium.process.returncode
                note = (
                    f"The browser had stopped (exit status {code}) and was started again: "
                    "pages open before are gone. "
                )
                await chromium.stop()
                self._forget_tabs()
            self.chromium = await self._launch()
            self._last_use = asyncio.get_running_loop().time()
            if self._idle is None or self._idle.done():
                self._idle = asyncio.create_task(self._reap_when_idle())
            return note

    async def _launch(self) -> Chromium:
        executable = find_chromium(self.settings.executable)
        if executable is None:
            raise BrowserUnavailable(MISSING)
        folder = self.plan.folder
        await asyncio.to_thread(_make_folders, folder)
        jail = await asyncio.to_thread(jail_argv, self.plan.sandbox, folder, self.plan.hidden)
        chromium = await launch(
            LaunchPlan(
                executable=executable,
                profile=folder / "profile",
                headless=self.settings.headless,
                log_file=folder / "chromium.log",
                pid_file=folder / "chromium.pid",
                jail=tuple(jail),
            )
        )
        cdp = self._live = chromium.cdp
        cdp.listen(lambda method, params, session: self._on_event(cdp, method, params, session))
        try:
            pages = await cdp.send("Target.getTargets", {"filter": [{"type": "page"}]})
            first = next(iter(pages["targetInfos"]), None)
            if first is not None:
                self._first_page = self._attached.setdefault(
                    first["targetId"], asyncio.get_running_loop().create_future()
                )
            # Written at once, in this order: the address guard is on before any page runs.
            await asyncio.gather(
                cdp.send(
                    "Browser.setDownloadBehavior",
                    {
                        "behavior": "allowAndName",
                        "downloadPath": str(folder / "downloading"),
                        "eventsEnabled": True,
                    },
                ),
                self._guard.start(cdp),
                cdp.send(
                    "Target.setAutoAttach",
                    {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True},
                ),
            )
        except CdpError as exc:
            self._live = None
            await chromium.stop()
            raise BrowserUnavailable(f"the browser did not accept its settings: {exc}") from exc
        return chromium

    async def _new_tab(self) -> Tab:
        assert self.chromium is not None
        first, self._first_page = self._first_page, None
        if first is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.settings.action_timeout):
                    tab = await first
                if not tab.closed:
                    return tab
        cdp = self.chromium.cdp
        made = await cdp.send("Target.createTarget", {"url": "about:blank"})
        attached = self._attached.setdefault(
            made["targetId"], asyncio.get_running_loop().create_future()
        )
        async with asyncio.timeout(self.settings.action_timeout):
            return await attached

    async def _set_up(self, cdp: CdpConnection, params: dict[str, Any]) -> None:
        """A page target attached paused: follow its events, then let it run; then hand it to
        whoever waits for it."""
        info, session = params["targetInfo"], params["sessionId"]
        if info.get("type") != "page":
            with contextlib.suppress(CdpError):
                await cdp.send("Runtime.runIfWaitingForDebugger", session=session)
            return
        tab = Tab(cdp, info["targetId"], session)
        self._by_session[session] = tab
        try:
            await tab.start()
        except CdpError:
            log.warning("a browser tab closed while it was being set up")
            tab.closed = True
        opener = info.get("openerId")
        opened_by = self._holder(opener) if opener else None
        if opened_by is not None:
            conversation, parent = opened_by
            self._tabs[conversation].append(tab)
            parent.happened.opened.append(tab)
            parent.wake()
        waiting = self._attached.pop(info["targetId"], None)
        if waiting is not None and not waiting.done():
            waiting.set_result(tab)

    def _holder(self, target_id: str) -> tuple[str, Tab] | None:
        for conversation, tabs in self._tabs.items():
            for tab in tabs:
                if tab.target_id == target_id:
                    return conversation, tab
        return None

    # Events ----------------------------------------------------------------------------------

    def _on_event(
        self, cdp: CdpConnection, method: str, params: dict[str, Any], session: str | None
    ) -> None:
        if cdp is not self._live:
            return  # a browser being stopped
        if session is not None:
            tab = self._by_session.get(session)
            if tab is None:
                return
            # A frame of another site attaches under its page (or frame) with a session of
            # its own: its events go to the same tab.
            if method == "Target.attachedToTarget":
                self._by_session[params["sessionId"]] = tab
            elif method == "Target.detachedFromTarget":
                self._by_session.pop(params.get("sessionId", ""), None)
            tab.on_event(method, params, session)
            return
        if method == "Target.attachedToTarget":
            self._spawn(self._set_up(cdp, params))
        elif method == "Target.detachedFromTarget":
            gone = self._by_session.pop(params.get("sessionId", ""), None)
            if gone is not None:
                gone.closed = True
        elif method == "Fetch.requestPaused":
            self._spawn(self._guard.decide(cdp, params, self._tab_of_frame))
        elif method == "Browser.downloadWillBegin":
            self._download_begins(params)
        elif method == "Browser.downloadProgress":
            self._download_progress(params)

    def _tab_of_frame(self, frame_id: str) -> Tab | None:
        return next((tab for tab in self._by_session.values() if tab.target_id == frame_id), None)

    def _download_begins(self, params: dict[str, Any]) -> None:
        tab = self._tab_of_frame(params.get("frameId", ""))
        if tab is None:
            return
        name = clean_name(params.get("suggestedFilename", ""), "download")
        self._downloads[params["guid"]] = _Download(tab, name, params.get("url", ""))
        tab.downloading.add(params["guid"])
        tab.wake()

    def _download_progress(self, params: dict[str, Any]) -> None:
        guid, state = params.get("guid", ""), params.get("state")
        download = self._downloads.get(guid)
        if download is None:
            return
        cap = self.settings.max_download_bytes
        if state == "inProgress" and params.get("receivedBytes", 0) > cap and self.chromium:
            self._spawn(self.chromium.cdp.send("Browser.cancelDownload", {"guid": guid}))
            download.tab.happened.downloads.append(
                f"{download.name} was not kept: it is larger than "
                f"tools.browser.max_download_bytes ({cap:,} bytes)"
            )
            self._end_download(guid, None)
        elif state == "completed":
            self._spawn(self._deliver(guid, download, int(params.get("receivedBytes", 0))))
        elif state == "canceled":
            self._end_download(guid, None)

    async def _deliver(self, guid: str, download: _Download, size: int) -> None:
        source = self.plan.folder / "downloading" / guid
        try:
            where = await asyncio.to_thread(
                move_in, self.plan.workspace, DOWNLOADS, download.name, source
            )
            download.tab.happened.downloads.append(
                f"downloaded {download.name} ({size:,} bytes) to {where} in the workspace "
                "(read it with read_file)"
            )
        except OSError as exc:
            download.tab.happened.downloads.append(f"{download.name} could not be kept: {exc}")
        self._end_download(guid, download)

    def _end_download(self, guid: str, download: _Download | None) -> None:
        found = self._downloads.pop(guid, None) or download
        if found is not None:
            found.tab.downloading.discard(guid)
            found.tab.wake()

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        task.add_done_callback(_log_failure)

    # Stopping ---------------------------------------------------------------------------------

    async def _reap_when_idle(self) -> None:
        loop = asyncio.get_running_loop()
        idle = self.settings.idle_minutes * 60
        while self.chromium is not None:
            await asyncio.sleep(max(1.0, self._last_use + idle - loop.time()))
            if self._busy == 0 and loop.time() - self._last_use >= idle:
                log.info("closing the browser after %g minutes unused", idle / 60)
                await self.stop()
                return

    async def stop(self) -> None:
        """Close the browser (all its processes); the next action starts it again."""
        async with self._starting:
            chromium, self.chromium = self.chromium, None
            self._live = None
            self._forget_tabs()
            if chromium is not None:
                await chromium.stop()

    async def close(self) -> None:
        """The daemon stops: the browser and the idle reaper end."""
        if self._idle is not None:
            self._idle.cancel()
        await self.stop()

    def _forget_tabs(self) -> None:
        self._first_page = None
        for tabs in self._tabs.values():
            for tab in tabs:
                tab.closed = True
        self._tabs.clear()
        self._by_session.clear()
        self._downloads.clear()


def _make_folders(folder: Path) -> None:
    for sub in ("profile", "downloading"):
        (folder / sub).mkdir(parents=True, exist_ok=True, mode=0o700)


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        exc = task.exception()
        if not isinstance(exc, CdpError):
            log.error("a browser task failed", exc_info=exc)
