"""One browser tab as the assistant holds it: its page, its references and what happens in it.

The tab follows Chromium's events for its page: every navigation (a new document, or a change
of URL inside the same one) starts a new epoch, and references are only honoured in the epoch
they were read in (and, for a frame's element, while that frame shows the same document). It
also keeps what happened during an action (dialogs, downloads, tabs the page opened, requests
refused), so an action's result can say all of it. Frames of other sites run in processes of
their own: the tab attaches each over its own session (`frames.py` reads them).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from countbot.browser.cdp import CdpConnection, CdpError
from countbot.browser.frames import ATTACH, HELPER, Frame, FrameTree, StaleReference

__all__ = ["PageGone", "StaleReference", "Tab"]
# The page is settled when nothing in its DOM changed for this long, and no request ran for
# `_IDLE_GRACE`.
_QUIET = 0.1
_IDLE_GRACE = 0.05
_SETTLE_CAP = 3.0


class PageGone(Exception):
    """The tab was closed or its page crashed."""


@dataclass(slots=True)
class Happenings:
    """What the page did on its own during an action (kept per tab, read after the action)."""

    dialogs: list[str] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)
    opened: list[Tab] = field(default_factory=list)
    # Tabs the page asked to open (`Page.windowOpen`); each joins `opened` once attached.
    windows: int = 0
    refused: list[str] = field(default_factory=list)


class Tab:
    """A page target attached over a flat CDP session."""

    def __init__(self, cdp: CdpConnection, target_id: str, session: str) -> None:
        self.cdp = cdp
        self.target_id = target_id
        self.session = session
        self.epoch = 0
        self.url = "about:blank"
        self.status: int | None = None
        self.status_text = ""
        self.failure = ""
        self.happened = Happenings()
        self.closed = False
        # References handed out, by name: the page's epoch and address, the frame and the
        # frame's document they were read from.
        self.refs: dict[str, tuple[int, str, Frame, int]] = {}
        self.next_ref = 1
        # The last snapshot's lines, kept for reading it page by page.
        self.snapshot: tuple[int, list[str]] | None = None
        self.frames = FrameTree(cdp)
        self.main = Frame(cdp, session, target_id, self.url, worlds=self.frames.worlds)
        self._loading = asyncio.Event()
        self._loaded = asyncio.Event()
        self._loaded.set()
        self._inflight: set[str] = set()
        # Downloads this tab started that have not ended (the host keeps them up to date).
        self.downloading: set[str] = set()
        # Set by anything an action may start: a navigation, a download, a new tab.
        self._begun = asyncio.Event()
        self._activity = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        """Follow the page's events, then let it run (it was attached paused). The commands are
        written in order at once: a paused page answers some of them only once it runs."""
        await asyncio.gather(
            self.send("Page.enable"),
            self.send("Network.enable"),
            self.send("Runtime.enable"),
            self.send("Page.addScriptToEvaluateOnNewDocument", HELPER),
            self.send("Target.setAutoAttach", ATTACH),
            self.send("Runtime.runIfWaitingForDebugger"),
        )

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.closed:
            raise PageGone("the tab was closed")
        return await self.cdp.send(method, params, self.session)

    # Events --------------------------------------------------------------------------------

    def on_event(self, method: str, params: dict[str, Any], session: str | None = None) -> None:
        """Chromium's events for this tab's session and its frames' (the host routes them)."""
        if method in _FRAME_HANDLERS:
            _FRAME_HANDLERS[method](self, params, session or self.session)
            return
        if session is not None and session != self.session:
            if method in _NETWORK:  # a frame's requests keep the page from being settled
                _HANDLERS[method](self, params)
            return
        handler = _HANDLERS.get(method)
        if handler is not None:
            handler(self, params)

    def _navigated(self, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        self._new_page(frame.get("url", self.url))
        self.main.navigated(self.url)
        self.frames.page_changed(self.session)
        self._activity.set()

    def _navigated_within(self, params: dict[str, Any]) -> None:
        if params.get("frameId") == self.target_id:
            self._new_page(params.get("url", self.url))

    def _new_page(self, url: str) -> None:
        self.epoch += 1
        self.url = url
        self.snapshot = None

    def _started(self, params: dict[str, Any]) -> None:
        if params.get("frameId") == self.target_id:
            self._loaded.clear()
            self._loading.set()
            self.failure = ""
            self.status, self.status_text = None, ""
            self.wake()

    def _stopped(self, params: dict[str, Any]) -> None:
        if params.get("frameId") == self.target_id:
            self._loaded.set()
            self._activity.set()

    def _response(self, params: dict[str, Any]) -> None:
        if params.get("type") == "Document" and params.get("frameId") == self.target_id:
            response = params.get("response", {})
            self.status = response.get("status")
            self.status_text = response.get("statusText", "")

    def _request(self, params: dict[str, Any]) -> None:
        if params.get("type") not in ("WebSocket", "EventSource", "Other"):
            self._inflight.add(params.get("requestId", ""))
            self._activity.set()

    def _request_done(self, params: dict[str, Any]) -> None:
        self._inflight.discard(params.get("requestId", ""))
        self._activity.set()

    def _failed(self, params: dict[str, Any]) -> None:
        self._request_done(params)
        if params.get("type") == "Document" and params.get("frameId") == self.target_id:
            if not params.get("canceled"):
                self.failure = params.get("blockedReason") or params.get("errorText", "")
            self._loaded.set()  # no frameStoppedLoading follows every failed navigation

    def _dialog(self, params: dict[str, Any], session: str) -> None:
        kind, message = params.get("type", "alert"), params.get("message", "")
        accept = kind in ("alert", "beforeunload")
        verb = "accepted" if accept else "dismissed"
        self.happened.dialogs.append(
            f"{kind} {json.dumps(message[:300], ensure_ascii=False)} ({verb})"
        )
        self.spawn(self.cdp.send("Page.handleJavaScriptDialog", {"accept": accept}, session))

    # Frames -------------------------------------------------------------------------------------

    def _frame_navigated(self, params: dict[str, Any], session: str) -> None:
        info = params.get("frame", {})
        if session == self.session and not info.get("parentId"):
            self._navigated(params)
        elif self.frames.navigated(info.get("id", ""), info.get("url", "")):
            self._activity.set()

    def _frame_detached(self, params: dict[str, Any], session: str) -> None:
        self.frames.detached(params.get("frameId", ""), session)

    def _attached(self, params: dict[str, Any], session: str) -> None:
        """A frame of another site (or a worker) attached paused: set it up, then let it run."""
        child = params["sessionId"]
        commands = self.frames.attached(params["targetInfo"], child)
        self.spawn(asyncio.gather(*(self.cdp.send(m, p, child) for m, p in commands)))

    def _context_made(self, params: dict[str, Any], session: str) -> None:
        self.frames.context_made(session, params.get("context", {}))

    def _context_gone(self, params: dict[str, Any], session: str) -> None:
        self.frames.context_gone(session, params.get("executionContextId"))

    def _contexts_cleared(self, params: dict[str, Any], session: str) -> None:
        self.frames.context_gone(session, None)
        if session == self.session:
            self.main.world = None

    def _detached(self, params: dict[str, Any], session: str) -> None:
        self.frames.session_ended(params.get("sessionId", ""))

    async def page_text(self) -> str:
        """The text a reader sees: the page's (with its same-origin frames), then the text of
        each frame of another origin read so far."""
        texts = [await self.call("pageText")]
        for frame in self.frames.read():
            with contextlib.suppress(CdpError, StaleReference):
                texts.append(await frame.call("pageText"))
        return "\n".join(t for t in texts if t)

    def _requested(self, params: dict[str, Any]) -> None:
        """A navigation was asked for (a link, a form, a script): the page counts as loading from
        now, or its start (a moment later) could be missed; a new tab or a download ends it."""
        if params.get("frameId") != self.target_id:
            return
        if params.get("disposition", "currentTab") == "currentTab":
            self._loaded.clear()
            self._loading.set()
        self.wake()

    def _window_open(self, params: dict[str, Any]) -> None:
        """The page opens a tab; the host attaches it and adds it to `happened.opened`."""
        self.happened.windows += 1
        self.wake()

    def wake(self) -> None:
        """Something began or ended (the host calls it for downloads and new tabs)."""
        self._begun.set()
        self._activity.set()

    def spawn(self, work: Any) -> None:
        """Run a follow-up command without awaiting it (an event handler cannot await)."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(_finished(self._tasks))

    # The page's helper ----------------------------------------------------------------------

    async def call(self, function: str, *args: Any, wait: bool = False) -> Any:
        """Call `function` of the helper in this page's isolated world, with JSON arguments."""
        if self.closed:
            raise PageGone("the tab was closed")
        return await self.main.call(function, *args, wait=wait)

    # References --------------------------------------------------------------------------------

    def issue(self, frame: Frame, start: int, end: int) -> None:
        """Record the references a snapshot read in `frame` (e<start> .. e<end - 1>)."""
        for number in range(start, end):
            self.refs[f"e{number}"] = (self.epoch, self.url, frame, frame.generation)
        self.next_ref = max(self.next_ref, end)

    def check(self, ref: str) -> Frame:
        """The frame `ref` was read in; refuses a reference that was never given, or was read
        from an earlier page (or an earlier document of its frame)."""
        issued = self.refs.get(ref)
        if issued is None:
            raise StaleReference(
                f"there is no reference {ref} on this page; take a snapshot to see the "
                "references of the page as it is now"
            )
        epoch, url, frame, generation = issued
        if epoch != self.epoch:
            where = f"from {url}" if url != self.url else "from this page before it changed"
            raise StaleReference(
                f"{ref} was read {where}; the tab has navigated since (now {self.url}), so it "
                "no longer points at anything. Take a snapshot and use its references"
            )
        if frame.gone or frame.generation != generation:
            raise StaleReference(
                f"{ref} was read in a frame that has changed since (now {frame.url or 'gone'}), "
                "so it no longer points at anything. Take a snapshot and use its references"
            )
        return frame

    # Waiting for the page --------------------------------------------------------------------

    def mark(self) -> None:
        """Forget what happened before: the next `settle` waits for what comes after."""
        self._loading.clear()
        self._begun.clear()
        self.happened = Happenings()

    async def settle(self, deadline: float) -> None:
        """Wait until the action's consequences are over: a navigation has loaded, requests are
        done and the DOM has stopped changing (each bounded by the action's deadline)."""
        loop = asyncio.get_running_loop()
        cap = min(deadline, loop.time() + _SETTLE_CAP)
        await self._quiet_or_begun(cap)
        while len(self.happened.opened) < self.happened.windows and loop.time() < cap:
            self._activity.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(cap):
                    await self._activity.wait()
        if self._loading.is_set():
            async with asyncio.timeout_at(deadline):
                await self._loaded.wait()
        if self.downloading:  # a download may take up to the whole deadline
            await self._network_idle(deadline)
        if self._inflight or self._loading.is_set():
            await self._network_idle(cap)
            await self._dom_quiet(cap)  # what the responses and the new page's scripts render

    async def _quiet_or_begun(self, cap: float) -> None:
        """The DOM going quiet, or a navigation, download or new tab beginning: whichever is
        first (a navigation ends the page's quiet wait anyway)."""
        quiet = asyncio.ensure_future(self._dom_quiet(cap))
        begun = asyncio.ensure_future(self._begun.wait())
        try:
            await asyncio.wait({quiet, begun}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in (quiet, begun):
                waiting.cancel()
            await asyncio.gather(quiet, begun, return_exceptions=True)

    async def _dom_quiet(self, cap: float) -> None:
        with contextlib.suppress(CdpError, StaleReference, TimeoutError):
            async with asyncio.timeout_at(cap):
                await self.call("quiet", int(_QUIET * 1000), 1500, wait=True)

    async def _network_idle(self, cap: float) -> None:
        """No request in flight (nor download) for a moment, or `cap`."""
        loop = asyncio.get_running_loop()
        while loop.time() < cap:
            self._activity.clear()
            if not self._inflight and not self.downloading:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(_IDLE_GRACE):
                        await self._activity.wait()
                if not self._activity.is_set():
                    return
                continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(cap):
                    await self._activity.wait()

    async def loaded(self, deadline: float) -> None:
        async with asyncio.timeout_at(deadline):
            await self._loaded.wait()

    async def first_page(self, deadline: float) -> None:
        """A tab the page opened: wait until its first page has loaded (or the deadline)."""
        loop = asyncio.get_running_loop()
        while (self.epoch == 0 or not self._loaded.is_set()) and loop.time() < deadline:
            self._activity.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.05):  # a navigation and its load both wake it
                    await self._activity.wait()

    async def title(self) -> str:
        """The page's title: its history entry's, or the document's own where that entry has
        none yet (a tab the page just opened)."""
        with contextlib.suppress(CdpError, PageGone):
            history = await self.send("Page.getNavigationHistory")
            entry = history["entries"][history["currentIndex"]]
            if entry.get("title"):
                return str(entry["title"])
            reply = await self.send(
                "Runtime.evaluate", {"expression": "document.title", "returnByValue": True}
            )
            return str(reply.get("result", {}).get("value") or "")
        return ""


def _finished(tasks: set[asyncio.Task[Any]]) -> Any:
    def done(task: asyncio.Task[Any]) -> None:
        tasks.discard(task)
        if not task.cancelled():
            task.exception()  # a dialog gone before it was answered is not an error

    return done


_NETWORK = frozenset(
    {"Network.requestWillBeSent", "Network.loadingFinished", "Network.loadingFailed"}
)
_HANDLERS = {
    "Page.navigatedWithinDocument": Tab._navigated_within,
    "Page.frameStartedLoading": Tab._started,
    "Page.frameStoppedLoading": Tab._stopped,
    "Network.requestWillBeSent": Tab._request,
    "Network.responseReceived": Tab._response,
    "Network.loadingFinished": Tab._request_done,
    "Network.loadingFailed": Tab._failed,
    "Page.frameRequestedNavigation": Tab._requested,
    "Page.frameClearedScheduledNavigation": Tab._stopped,
    "Page.windowOpen": Tab._window_open,
}
_FRAME_HANDLERS = {
    "Page.frameNavigated": Tab._frame_navigated,
    "Page.frameDetached": Tab._frame_detached,
    "Page.javascriptDialogOpening": Tab._dialog,
    "Target.attachedToTarget": Tab._attached,
    "Target.detachedFromTarget": Tab._detached,
    "Runtime.executionContextCreated": Tab._context_made,
    "Runtime.executionContextDestroyed": Tab._context_gone,
    "Runtime.executionContextsCleared": Tab._contexts_cleared,
}
