"""One browser tab as the assistant holds it: its page, its references and what happens in it.

The tab follows Chromium's events for its page: every navigation (a new document, or a change
of URL inside the same one) starts a new epoch, and references are only honoured in the epoch
they were read in. It also keeps what happened during an action (dialogs, downloads, tabs the
page opened, requests refused), so an action's result can say all of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from countbot.browser.cdp import CdpConnection, CdpError

_SCRIPT = resources.files("countbot.browser").joinpath("page.js").read_text(encoding="utf-8")
_WORLD = "countbot"
# How long an action's consequences may take to begin (a navigation, a download, a new tab).
_START_WINDOW = 0.2
# The page is settled when no request ran and nothing in the DOM changed for this long.
_QUIET = 0.15
_SETTLE_CAP = 3.0


class StaleReference(Exception):
    """A reference read from an earlier page than the one shown now."""


class PageGone(Exception):
    """The tab was closed or its page crashed."""


@dataclass(slots=True)
class Happenings:
    """What the page did on its own during an action (kept per tab, read after the action)."""

    dialogs: list[str] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)
    opened: list[Tab] = field(default_factory=list)
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
        # References handed out, by name, with the epoch of the page they were read from.
        self.refs: dict[str, tuple[int, str]] = {}
        self.next_ref = 1
        # The last snapshot's lines, kept for reading it page by page.
        self.snapshot: tuple[int, list[str]] | None = None
        self._world: int | None = None
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
            self.send("Runtime.runIfWaitingForDebugger"),
        )

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.closed:
            raise PageGone("the tab was closed")
        return await self.cdp.send(method, params, self.session)

    # Events --------------------------------------------------------------------------------

    def on_event(self, method: str, params: dict[str, Any]) -> None:
        """Chromium's events for this tab's session (the host routes them here)."""
        handler = _HANDLERS.get(method)
        if handler is not None:
            handler(self, params)

    def _navigated(self, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        if frame.get("parentId"):
            return
        self._new_page(frame.get("url", self.url))
        self._world = None

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
        if params.get("type") == "Document" and not params.get("canceled"):
            self.failure = params.get("blockedReason") or params.get("errorText", "")

    def _dialog(self, params: dict[str, Any]) -> None:
        kind, message = params.get("type", "alert"), params.get("message", "")
        accept = kind in ("alert", "beforeunload")
        verb = "accepted" if accept else "dismissed"
        self.happened.dialogs.append(
            f"{kind} {json.dumps(message[:300], ensure_ascii=False)} ({verb})"
        )
        self.spawn(self.send("Page.handleJavaScriptDialog", {"accept": accept}))

    def _contexts_cleared(self, params: dict[str, Any]) -> None:
        self._world = None

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
        world = await self._helper_world()
        expression = f"globalThis.__countbot.{function}({', '.join(json.dumps(a) for a in args)})"
        try:
            reply = await self.send(
                "Runtime.evaluate",
                {
                    "expression": expression,
                    "contextId": world,
                    "returnByValue": True,
                    "awaitPromise": wait,
                },
            )
        except CdpError as exc:
            if "context" in str(exc).lower():  # the page changed under the call
                self._world = None
                raise StaleReference("the page changed while it was being read") from exc
            raise
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text", "")
            raise CdpError(f"the page helper failed: {text[:300]}")
        return reply.get("result", {}).get("value")

    async def _helper_world(self) -> int:
        if self._world is None:
            made = await self.send(
                "Page.createIsolatedWorld",
                {"frameId": self.target_id, "worldName": _WORLD, "grantUniveralAccess": True},
            )
            world = made["executionContextId"]
            await self.send(
                "Runtime.evaluate",
                {"expression": f"globalThis.__countbot = {_SCRIPT}; true", "contextId": world},
            )
            self._world = world
        return self._world

    # References --------------------------------------------------------------------------------

    def issue(self, count: int, start: int) -> None:
        """Record the references a snapshot handed out (e<start> .. e<start+count-1>)."""
        for number in range(start, start + count):
            self.refs[f"e{number}"] = (self.epoch, self.url)
        self.next_ref = start + count

    def check(self, ref: str) -> None:
        """Refuse a reference that was never given, or was read from an earlier page."""
        issued = self.refs.get(ref)
        if issued is None:
            raise StaleReference(
                f"there is no reference {ref} on this page; take a snapshot to see the "
                "references of the page as it is now"
            )
        epoch, url = issued
        if epoch != self.epoch:
            where = f"from {url}" if url != self.url else "from this page before it changed"
            raise StaleReference(
                f"{ref} was read {where}; the tab has navigated since (now {self.url}), so it "
                "no longer points at anything. Take a snapshot and use its references"
            )

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
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_START_WINDOW):
                await self._begun.wait()
        if self._loading.is_set():
            async with asyncio.timeout_at(deadline):
                await self._loaded.wait()
        cap = min(deadline, loop.time() + _SETTLE_CAP)
        if self.downloading:  # a download may take up to the whole deadline
            await self._network_quiet(deadline)
        await self._network_quiet(cap)
        with contextlib.suppress(CdpError, StaleReference, TimeoutError):
            async with asyncio.timeout_at(cap):
                await self.call("quiet", int(_QUIET * 1000), 1500, wait=True)

    async def _network_quiet(self, cap: float) -> None:
        loop = asyncio.get_running_loop()
        while loop.time() < cap:
            self._activity.clear()
            if not self._inflight and not self.downloading:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(_QUIET):
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

    async def title(self) -> str:
        with contextlib.suppress(CdpError, PageGone):
            history = await self.send("Page.getNavigationHistory")
            entry = history["entries"][history["currentIndex"]]
            return str(entry.get("title", ""))
        return ""


def _finished(tasks: set[asyncio.Task[Any]]) -> Any:
    def done(task: asyncio.Task[Any]) -> None:
        tasks.discard(task)
        if not task.cancelled():
            task.exception()  # a dialog gone before it was answered is not an error

    return done


_HANDLERS = {
    "Page.frameNavigated": Tab._navigated,
    "Page.navigatedWithinDocument": Tab._navigated_within,
    "Page.frameStartedLoading": Tab._started,
    "Page.frameStoppedLoading": Tab._stopped,
    "Network.requestWillBeSent": Tab._request,
    "Network.responseReceived": Tab._response,
    "Network.loadingFinished": Tab._request_done,
    "Network.loadingFailed": Tab._failed,
    "Page.javascriptDialogOpening": Tab._dialog,
    "Runtime.executionContextsCleared": Tab._contexts_cleared,
}
