"""What each browser action does to a tab, and the honest account of what happened.

Every action ends in a result that says what really happened: the element acted on and what
changed (address, title, new text, dialogs, downloads, new tabs), or exactly why not (a stale
reference, hidden by which element, disabled, detached, timed out, the navigation's error or
status). Nothing is reported done that was not done.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from countbot.browser import frames
from countbot.browser.cdp import CdpError
from countbot.browser.snapshot import pages
from countbot.browser.tab import StaleReference, Tab
from countbot.browser.workspace_files import save_bytes
from countbot.llm.types import ImagePart
from countbot.tools.base import ToolResult
from countbot.tools.workspace_guard import WorkspaceGuard

# Seconds a new tab's title is waited for after its first load (a blank page's comes first).
_TITLE_WAIT = 1.0
_NEW_LINES = 12
_NEW_CHARS = 1500
_KEYS: dict[str, tuple[str, int, str]] = {
    "Enter": ("Enter", 13, "\r"),
    "Tab": ("Tab", 9, ""),
    "Escape": ("Escape", 27, ""),
    "Backspace": ("Backspace", 8, ""),
    "Delete": ("Delete", 46, ""),
    "Space": ("Space", 32, " "),
    "ArrowUp": ("ArrowUp", 38, ""),
    "ArrowDown": ("ArrowDown", 40, ""),
    "ArrowLeft": ("ArrowLeft", 37, ""),
    "ArrowRight": ("ArrowRight", 39, ""),
    "PageUp": ("PageUp", 33, ""),
    "PageDown": ("PageDown", 34, ""),
    "Home": ("Home", 36, ""),
    "End": ("End", 35, ""),
}
KEY_NAMES = tuple(_KEYS)


class ActionFailed(Exception):
    """The action was not done; the message says exactly why."""


@dataclass(frozen=True, slots=True)
class _Seen:
    url: str
    title: str
    epoch: int
    text: str


@dataclass(frozen=True, slots=True)
class Actions:
    """The actions on one tab, under one deadline."""

    tab: Tab
    deadline: float
    snapshot_tokens: int

    async def snapshot(self, page: int = 1) -> str:
        """The page as text with references, part `page` of it."""
        tab = self.tab
        if page == 1 or tab.snapshot is None or tab.snapshot[0] != tab.epoch:
            tab.snapshot = (tab.epoch, await frames.snapshot(tab))
        parts = pages(tab.snapshot[1], self.snapshot_tokens)
        if page > len(parts):
            raise ActionFailed(f"the snapshot has {len(parts)} part(s); there is no part {page}")
        status = f" (status {tab.status})" if tab.status else ""
        head = [f'Page "{await tab.title()}" at {tab.url}{status}']
        if len(parts) > 1:
            more = f"; read on with page={page + 1}" if page < len(parts) else ""
            head.append(f"Snapshot part {page} of {len(parts)}{more}.")
        head.append("References [eN] are valid until the page changes.")
        body = parts[page - 1] or ["(the page shows no text)"]
        return "\n".join(head) + "\n\n" + "\n".join(body)

    async def open(self, url: str) -> ToolResult:
        tab = self.tab
        before = await self._seen()
        tab.mark()
        try:
            opened = await tab.send("Page.navigate", {"url": url})
        except CdpError as exc:
            raise ActionFailed(f"could not open {url}: {exc}") from None
        if opened.get("errorText"):
            tab.failure = opened["errorText"]
        return await self._after(f"Opened {url}.", before)

    async def click(self, ref: str) -> ToolResult:
        tab = self.tab
        frame = tab.check(ref)
        spot = _checked(await frame.call("target", ref), ref)
        # The point in the frame's own viewport, placed on the tab's screen.
        point = _checked(await frame.offset(spot["x"], spot["y"]), ref, spot["what"])
        before = await self._seen()
        tab.mark()
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            await tab.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": point["x"], "y": point["y"], "button": "left", "clickCount": 1},
            )
        return await self._after(f"Clicked {spot['what']} [{ref}].", before)

    async def type(self, ref: str, text: str, submit: bool) -> ToolResult:
        tab = self.tab
        frame = tab.check(ref)
        field = _checked(await frame.call("focus", ref), ref)
        before = await self._seen()
        tab.mark()
        if text:
            await tab.send("Input.insertText", {"text": text})
        else:
            await self._key("Delete")
        typed = await frame.call("valueOf", ref)
        shown = typed.get("value", "") if isinstance(typed, dict) else ""
        holds = _quoted(shown[:200])
        if shown and set(shown) == {"•"}:
            holds = f"{len(shown)} characters (hidden)"
        head = f"Typed into {field['what']} [{ref}]; it now holds {holds}."
        if submit:
            await self._key("Enter")
            head += " Pressed Enter."
        return await self._after(head, before)

    async def select(self, ref: str, option: str) -> ToolResult:
        tab = self.tab
        frame = tab.check(ref)
        before = await self._seen()
        tab.mark()
        chosen = _checked(await frame.call("choose", ref, option), ref)
        return await self._after(
            f"Selected {_quoted(chosen['chosen'])} in {chosen['what']}.", before
        )

    async def press(self, key: str) -> ToolResult:
        if key not in _KEYS:
            raise ActionFailed(f"unknown key {key!r}; keys: {', '.join(KEY_NAMES)}")
        before = await self._seen()
        self.tab.mark()
        await self._key(key)
        return await self._after(f"Pressed {key}.", before)

    async def scroll(self, direction: str) -> ToolResult:
        tab = self.tab
        before = await self._seen()
        tab.mark()
        view = await tab.call("scrollBy", 0)
        step = int(view["view"] * 0.8) * (-1 if direction == "up" else 1)
        where = await tab.call("scrollBy", step)
        head = f"Scrolled {direction}: now at {where['y']} of {where['height']} px."
        return await self._after(head, before)

    async def back(self) -> ToolResult:
        tab = self.tab
        history = await tab.send("Page.getNavigationHistory")
        index = history["currentIndex"]
        if index == 0:
            raise ActionFailed("there is no earlier page in this tab to go back to")
        entry = history["entries"][index - 1]
        before = await self._seen()
        tab.mark()
        await tab.send("Page.navigateToHistoryEntry", {"entryId": entry["id"]})
        return await self._after(f"Went back to {entry.get('url', '')}.", before)

    async def wait_for(self, text: str) -> ToolResult:
        loop = asyncio.get_running_loop()
        while True:
            shown = await self.tab.call("pageText")
            if text.casefold() in shown.casefold():
                line = next(
                    (ln for ln in shown.splitlines() if text.casefold() in ln.casefold()), text
                )
                return ToolResult(f"The page shows {_quoted(text)}: {line.strip()[:300]}")
            if loop.time() + 0.25 >= self.deadline:
                raise ActionFailed(
                    f"timed out: {_quoted(text)} did not appear on {self.tab.url}; the page "
                    f"shows: {' '.join(shown.split())[:300]}"
                )
            await asyncio.sleep(0.25)

    async def screenshot(self, workspace: WorkspaceGuard) -> ToolResult:
        shot = await self.tab.send("Page.captureScreenshot", {"format": "png"})
        data = shot["data"]
        name = time.strftime("screenshot-%Y%m%d-%H%M%S.png")
        where = await asyncio.to_thread(
            save_bytes, workspace, "browser", name, base64.b64decode(data)
        )
        return ToolResult(
            f"Screenshot of {self.tab.url} saved to {where} in the workspace (send it to the "
            "user with the message tool to show them).",
            images=(ImagePart("image/png", data=data),),
        )

    # Parts ------------------------------------------------------------------------------------

    async def _key(self, key: str) -> None:
        code, number, text = _KEYS[key]
        name = " " if key == "Space" else key
        down: dict[str, Any] = {
            "type": "keyDown" if text else "rawKeyDown",
            "key": name,
            "code": code,
            "windowsVirtualKeyCode": number,
        }
        if text:
            down["text"] = text
        await self.tab.send("Input.dispatchKeyEvent", down)
        await self.tab.send(
            "Input.dispatchKeyEvent",
            {"type": "keyUp", "key": name, "code": code, "windowsVirtualKeyCode": number},
        )

    async def _seen(self) -> _Seen:
        tab = self.tab
        if tab.epoch == 0:  # the blank page a new tab starts with: nothing to read
            return _Seen(tab.url, "", 0, "")
        try:
            text = await tab.page_text()
        except (CdpError, StaleReference):
            text = ""
        return _Seen(tab.url, await tab.title(), tab.epoch, text or "")

    async def _after(self, head: str, before: _Seen) -> ToolResult:
        """Wait for the action's consequences, then say what they were."""
        tab = self.tab
        try:
            await tab.settle(self.deadline)
        except TimeoutError:
            return ToolResult.error(
                f"{head} Then the page did not finish loading in time (still at {tab.url})."
            )
        lines, failed = [head], False
        if tab.happened.refused:
            failed = True
            lines.append("Refused requests: " + "; ".join(tab.happened.refused[:3]))
        if tab.failure:
            failed = True
            lines.append(f"The page could not be loaded: {tab.failure}.")
        elif tab.epoch != before.epoch:
            status = tab.status or 0
            if status >= 400:
                failed = True
                lines.append(
                    f"The server answered {status} {tab.status_text or ''}".rstrip()
                    + f" for {tab.url}."
                )
            if not head.startswith(f"Opened {tab.url}."):
                lines.append(f"The tab moved to {tab.url} (references from before no longer work).")
        for label, items in (
            ("The page showed a dialog", tab.happened.dialogs),
            ("Download", tab.happened.downloads),
        ):
            lines.extend(f"{label}: {item}." for item in items)
        if tab.happened.opened:
            lines.extend([await _opened(new, self.deadline) for new in tab.happened.opened])
            return ToolResult("\n".join(lines), status="error" if failed else "ok")
        if tab.epoch != before.epoch and not tab.failure:
            lines.append("")
            lines.append(await self.snapshot())
        else:
            lines.extend(await self._changes(before))
        return ToolResult("\n".join(lines), status="error" if failed else "ok")

    async def _changes(self, before: _Seen) -> list[str]:
        after = await self._seen()
        said = []
        if after.title != before.title:
            said.append(f"The title is now {_quoted(after.title)}.")
        old = Counter(line.strip() for line in before.text.splitlines())
        new: list[str] = []
        for line in (ln.strip() for ln in after.text.splitlines()):
            if not line:
                continue
            if old[line] > 0:
                old[line] -= 1
            else:
                new.append(line)
        gone = sum(count for line, count in old.items() if line and count > 0)
        if new:
            shown, size = [], 0
            for line in new[:_NEW_LINES]:
                size += len(line)
                if size > _NEW_CHARS:
                    break
                shown.append(f"  {line[:300]}")
            more = len(new) - len(shown)
            said.append("New text on the page:" + "".join(f"\n{line}" for line in shown))
            if more:
                said.append(f"  … and {more} more new line(s); take a snapshot to read them.")
        if gone:
            said.append(f"{gone} line(s) of text left the page.")
        if not said:
            said.append("Nothing on the page changed (same address, title and text).")
        return said


async def _opened(tab: Tab, deadline: float) -> str:
    """A tab the page opened, once it has loaded (or the deadline passed). Its first load may
    be the blank page every new tab starts as: the title is looked at again for a moment."""
    await tab.first_page(deadline)
    loop = asyncio.get_running_loop()
    patience = min(deadline, loop.time() + _TITLE_WAIT)
    title = await tab.title()
    while not title and loop.time() < patience:
        await asyncio.sleep(0.05)
        title = await tab.title()
    return (
        f"It opened a new tab, now the current one: {tab.url} "
        f"{_quoted(title)} (take a snapshot to read it; `close` returns here)."
    )


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _checked(found: Any, ref: str, what: str = "") -> dict[str, Any]:
    """The helper's answer, or the reason it gave turned into words (`what`: the element, when
    the answer is about the frame around it)."""
    if not isinstance(found, dict):
        raise ActionFailed(f"{ref} could not be found on the page")
    error = found.get("error")
    if error is None:
        return found
    what = f"{what or found.get('what') or 'the element'} [{ref}]"
    reasons = {
        "unknown": f"{ref} is not known on this page (it was reloaded); take a snapshot",
        "detached": f"{ref} is no longer in the page (the page replaced it); take a snapshot",
        "disabled": f"{what} is disabled",
        "hidden": f"{what} is not visible (hidden, or of no size)",
        "covered": (
            f"{what} is hidden by {found.get('by')}, which lies over it; deal with that "
            "first (it may have a button to close or accept it)"
        ),
        "read-only": f"{what} is read-only",
        "not-editable": f"{what} is not a field that takes text",
        "unfocusable": f"{what} does not take the keyboard focus",
        "not-select": f"{what} is not a list to select from; click it instead",
        "no-option": f"{what} has no such option; it offers: {found.get('options')}",
        "option-disabled": f"the option {found.get('option')!r} of {what} is disabled",
    }
    raise ActionFailed("not done: " + reasons.get(error, f"{what}: {error}"))
