"""The documents of a tab the page helper reads, and a snapshot stitched from all of them.

A frame of the page's own origin is read by the page's helper directly. A frame of another
origin cannot be: it gets a helper of its own, in the page's process (another origin of the same
site) or in a process of its own (another site: an out-of-process frame, attached over its own
CDP session). Its snapshot is spliced in where its `<iframe>` stands, its references are
recorded with it, and an action on one of them runs in that frame (a click at the point the
frame's box puts it on the screen).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Protocol

from countbot.browser.cdp import CdpConnection, CdpError

_SCRIPT = resources.files("countbot.browser").joinpath("page.js").read_text(encoding="utf-8")
_WORLD = "countbot"
# Installs the helper once per document (a world made again by name is the same world).
_INSTALL = f"globalThis.__countbot = globalThis.__countbot || {_SCRIPT}; true"
# Every new document of a page or frame gets its helper's world as it is made, while the page
# loads, rather than two round trips after it has loaded (`Page.addScriptToEvaluateOnNewDocument`
# in a named world; `runImmediately` also serves the document shown now).
HELPER = {"source": _INSTALL, "worldName": _WORLD, "runImmediately": True}


class StaleReference(Exception):
    """A reference read from an earlier page (or frame document) than the one shown now, or a
    page that changed while it was being read."""


@dataclass(eq=False, slots=True)
class Frame:
    """One document with the helper in an isolated world: `frame_id` over `session`."""

    cdp: CdpConnection
    session: str
    frame_id: str
    url: str = ""
    # The frame whose document holds this one's `<iframe>` (None: the tab's page).
    parent: Frame | None = None
    # Counts the documents this frame has shown; a reference names the one it was read from.
    generation: int = 0
    gone: bool = False
    world: int | None = field(default=None, repr=False)
    # The tab's helper worlds as Chromium announced them: (session, frame id) -> context id.
    worlds: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)

    def navigated(self, url: str) -> None:
        self.generation += 1
        self.url = url
        self.world = None

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.gone:
            raise StaleReference("the frame it was read from is gone")
        return await self.cdp.send(method, params, self.session)

    async def call(self, function: str, *args: Any, wait: bool = False) -> Any:
        """Call `function` of the helper in this frame's isolated world, with JSON arguments."""
        world = await self._helper_world()
        expression = f"globalThis.__countbot.{function}({', '.join(json.dumps(a) for a in args)})"
        params = {"expression": expression, "contextId": world, "returnByValue": True}
        return self._value(
            await self._evaluate("Runtime.evaluate", {**params, "awaitPromise": wait})
        )

    async def on_owner(self, child: Frame, function: str, *args: Any) -> Any:
        """Call `function(ownerElement, *args)` of this frame's helper on the `<iframe>` that
        holds `child` (found by the browser, not by matching addresses)."""
        owner = await self.send("DOM.getFrameOwner", {"frameId": child.frame_id})
        world = await self._helper_world()
        node = await self.send(
            "DOM.resolveNode",
            {"backendNodeId": owner["backendNodeId"], "executionContextId": world},
        )
        declaration = f"function(...a) {{ return globalThis.__countbot.{function}(this, ...a); }}"
        reply = await self._evaluate(
            "Runtime.callFunctionOn",
            {
                "objectId": node["object"]["objectId"],
                "functionDeclaration": declaration,
                "arguments": [{"value": a} for a in args],
                "returnByValue": True,
            },
        )
        return self._value(reply)

    async def _evaluate(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return await self.send(method, params)
        except CdpError as exc:
            if "context" in str(exc).lower() or "node" in str(exc).lower():
                if self.worlds.get((self.session, self.frame_id)) == self.world:
                    del self.worlds[(self.session, self.frame_id)]  # gone before it was said
                self.world = None
                raise StaleReference("the page changed while it was being read") from exc
            raise

    def _value(self, reply: dict[str, Any]) -> Any:
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text", "")
            raise CdpError(f"the page helper failed: {text[:300]}")
        return reply.get("result", {}).get("value")

    async def _helper_world(self) -> int:
        if self.world is None:
            self.world = self.worlds.get((self.session, self.frame_id))
        if self.world is None:  # not announced (yet): made here, the helper installed once
            made = await self.send(
                "Page.createIsolatedWorld",
                {"frameId": self.frame_id, "worldName": _WORLD, "grantUniveralAccess": True},
            )
            world = made["executionContextId"]
            await self.send("Runtime.evaluate", {"expression": _INSTALL, "contextId": world})
            self.world = world
        return self.world

    async def offset(self, x: float, y: float) -> dict[str, Any]:
        """The point (x, y) of this frame's viewport on the tab's screen; an error when the
        frame's own box is covered there (the `target` helper's answer shape)."""
        frame = self
        while frame.parent is not None:
            box = await frame.parent.on_owner(frame, "frameBox", x, y)
            if not isinstance(box, dict) or box.get("error"):
                return box if isinstance(box, dict) else {"error": "detached"}
            x, y, frame = box["x"], box["y"], frame.parent
        return {"x": x, "y": y}


# Frames of other sites attach paused, flat on the same connection, whatever their depth.
ATTACH = {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}


class FrameTree:
    """A tab's frames of other origins: in its page's process (found in a frame tree when a
    snapshot is read) or out of process (attached over sessions of their own)."""

    def __init__(self, cdp: CdpConnection) -> None:
        self._cdp = cdp
        self.worlds: dict[tuple[str, str], int] = {}
        self._by_id: dict[str, Frame] = {}
        self._by_session: dict[str, Frame] = {}
        self._hosted_in: dict[str, str] = {}  # an out-of-process frame -> its parent frame

    def read(self) -> list[Frame]:
        """The frames known (those a snapshot has read, and those attached)."""
        return list(self._by_id.values())

    def attached(self, info: dict[str, Any], session: str) -> list[tuple[str, dict[str, Any]]]:
        """A target attached under the tab; the commands that set it up and let it run."""
        if info.get("type") != "iframe":  # a worker: nothing to read
            return [("Runtime.runIfWaitingForDebugger", {})]
        replaced = self._by_id.get(info["targetId"])
        if replaced is not None:  # the frame moved out of the page's process
            self._forget(replaced)
        frame = Frame(self._cdp, session, info["targetId"], info.get("url", ""), worlds=self.worlds)
        self._by_id[frame.frame_id] = frame
        self._by_session[session] = frame
        self._hosted_in[frame.frame_id] = info.get("parentFrameId", "")
        return [
            ("Page.enable", {}),
            ("Network.enable", {}),
            ("Runtime.enable", {}),
            ("Page.addScriptToEvaluateOnNewDocument", HELPER),
            ("Target.setAutoAttach", ATTACH),
            ("Runtime.runIfWaitingForDebugger", {}),
        ]

    def context_made(self, session: str, context: dict[str, Any]) -> None:
        """Chromium made a script context: the helper's world of a frame's new document."""
        frame_id = (context.get("auxData") or {}).get("frameId")
        if context.get("name") == _WORLD and frame_id:
            self.worlds[(session, frame_id)] = int(context["id"])

    def context_gone(self, session: str, context_id: int | None) -> None:
        """A context ended (None: all of the session's, as at a navigation of its page)."""
        for key in [k for k, v in self.worlds.items() if k[0] == session]:
            if context_id is None or self.worlds[key] == context_id:
                del self.worlds[key]

    def navigated(self, frame_id: str, url: str) -> bool:
        frame = self._by_id.get(frame_id)
        if frame is not None:
            frame.navigated(url)
        return frame is not None

    def detached(self, frame_id: str, session: str) -> None:
        frame = self._by_id.get(frame_id)
        if frame is not None and frame.session == session:  # not its move to a process of its own
            self._forget(frame)

    def session_ended(self, session: str) -> None:
        frame = self._by_session.pop(session, None)
        if frame is not None:
            self._forget(frame)

    def page_changed(self, session: str) -> None:
        """The page navigated: the frames in its process went with it (those out of process
        detach on their own)."""
        for frame in [f for f in self._by_id.values() if f.session == session]:
            self._forget(frame)

    def _forget(self, frame: Frame) -> None:
        frame.gone = True
        self._by_id.pop(frame.frame_id, None)
        self._hosted_in.pop(frame.frame_id, None)

    async def children(self, frame: Frame) -> list[Frame]:
        """The frames of other origins whose `<iframe>` is in `frame`'s document: those in its
        process (from its frame tree; one of its own origin its helper reads itself) and those
        attached out of process."""
        tree = (await frame.send("Page.getFrameTree"))["frameTree"]
        found = _subtree(tree, frame.frame_id)
        origin = found["frame"].get("securityOrigin") if found else None
        children = []
        for node in found.get("childFrames", []) if found else []:
            info = node["frame"]
            if info.get("securityOrigin") == origin:
                continue
            child = self._by_id.get(info["id"])
            if child is None or child.session != frame.session:
                child = Frame(
                    self._cdp, frame.session, info["id"], info.get("url", ""), worlds=self.worlds
                )
                self._by_id[child.frame_id] = child
            children.append(child)
        children.extend(
            self._by_id[fid]
            for fid, parent in self._hosted_in.items()
            if parent == frame.frame_id and fid in self._by_id
        )
        for child in children:
            child.parent = frame
        return children


def _subtree(tree: dict[str, Any], frame_id: str) -> dict[str, Any] | None:
    if tree["frame"]["id"] == frame_id:
        return tree
    for child in tree.get("childFrames", []):
        found = _subtree(child, frame_id)
        if found is not None:
            return found
    return None


@dataclass(slots=True)
class _Read:
    lines: list[str]
    end: int  # the number after the last reference handed out


class Reader(Protocol):
    """What a snapshot needs of a tab: its frames, and where references are recorded."""

    main: Frame
    frames: FrameTree
    next_ref: int

    def issue(self, frame: Frame, start: int, end: int) -> None: ...


async def snapshot(tab: Reader) -> list[str]:
    """The tab's page as text with references, frames of other origins spliced in where they
    stand; the references are recorded on the tab with the frame each was read in."""
    return (await _read(tab, tab.main, tab.next_ref, depth=0, left=[_MAX_FRAMES])).lines


# Frames inside frames inside frames: enough for real pages, bounded for hostile ones.
_MAX_DEPTH = 4
# Frames of other origins read per snapshot (each costs round trips): a page of a hundred ad
# frames shows the rest as not read.
_MAX_FRAMES = 20


async def _read(tab: Reader, frame: Frame, start: int, depth: int, left: list[int]) -> _Read:
    """`frame`'s snapshot from reference `start`, with its frames' spliced in (`left`: how many
    more frames this snapshot may read, shared by the whole tree)."""
    read = await frame.call("snapshot", start)
    children: list[Frame] = []
    if (read["unread"] or read["frames"]) and depth < _MAX_DEPTH and left[0] > 0:
        # Frames of another origin (most pages have none and are read once): found, and those
        # not yet tagged tagged, and the document read again to place them.
        children = (await tab.frames.children(frame))[: left[0]]
        left[0] -= len(children)
        if read["unread"]:
            for child in children:
                with contextlib.suppress(CdpError, StaleReference):
                    await frame.on_owner(child, "tagFrame", child.frame_id)
            read = await frame.call("snapshot", start)
    tab.issue(frame, start, read["next"])
    lines: list[str] = read["lines"]
    end = read["next"]
    spliced: list[tuple[int, list[str]]] = []
    by_id = {child.frame_id: child for child in children}
    for index, key in read.get("frames", []):
        child = by_id.get(key)
        if child is None:  # tagged by an earlier snapshot, past this one's reach
            spliced.append((index, ["(not read)"]))
            continue
        try:
            inner = await _read(tab, child, end, depth + 1, left)
        except (CdpError, StaleReference):
            spliced.append((index, ["(the frame changed while it was read)"]))
            continue
        end = inner.end
        spliced.append((index, inner.lines))
    for index, inner_lines in reversed(spliced):
        lines[index:index] = inner_lines
    return _Read(lines, end)
