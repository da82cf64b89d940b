"""The `browser` tool: one tool whose `action` says what to do in the conversation's tab."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

from countbot.browser.actions import KEY_NAMES, ActionFailed, Actions
from countbot.browser.cdp import CdpError, ConnectionClosed
from countbot.browser.chromium import BrowserUnavailable
from countbot.browser.host import BrowserHost
from countbot.browser.tab import PageGone, StaleReference, Tab
from countbot.tools.base import Egress, Tool, ToolContext, ToolResult
from countbot.tools.schema import choice, integer, params, text

ACTIONS = (
    "open",
    "snapshot",
    "click",
    "type",
    "select",
    "press",
    "scroll",
    "wait_for",
    "back",
    "screenshot",
    "close",
)
_NEED_REF = frozenset({"click", "type", "select"})


class BrowserTool(Tool):
    name = "browser"
    description = (
        "Use a real web browser (it runs JavaScript and keeps logins). `open` a URL, then read "
        "the page with `snapshot`: text with references like [e3] for links, buttons and "
        "fields; act on them with `click`, `type` (text; submit=true presses Enter), `select` "
        "(option); `press` a key, `scroll` up/down, `wait_for` text, go `back`, take a "
        "`screenshot` (you see it; it is saved in the workspace), `close` the tab. A reference "
        "works only on the page it was read from. Every result says what happened."
    )
    parameters = params(
        required={"action": choice(*ACTIONS)},
        optional={
            "url": text("For open: an http:// or https:// URL."),
            "ref": text("For click, type, select: a reference from the snapshot, like e3."),
            "text": text("For type: the text to enter; for wait_for: the text to wait for."),
            "submit": {"type": "boolean", "description": "For type: press Enter afterwards."},
            "option": text("For select: the option's label or value."),
            "key": choice(*KEY_NAMES, description="For press."),
            "direction": choice("down", "up", description="For scroll (default down)."),
            "page": integer("For snapshot: which part of a long page (1 first).", minimum=1),
        },
    )
    brings = frozenset({"untrusted"})

    def __init__(self, host: BrowserHost) -> None:
        self._host = host
        # The action's own deadline fires first and gives the clearer message.
        self.timeout = host.settings.action_timeout + 10.0

    async def egress(self, args: dict[str, Any], ctx: ToolContext) -> Egress | None:
        """What the action sends out: the URL opened, the text typed (the page's scripts see
        every key) and where, or the form a click or Enter submits."""
        action = args.get("action")
        if action == "open":
            url = str(args.get("url", ""))
            return Egress("url", _host(url) or "(no host)", url)
        if action not in ("type", "select", "click", "press"):
            return None
        tab = await self._host.current(ctx.session_id)
        if tab is None:
            return None
        if action in ("type", "select"):
            # The page's scripts see every key: those of the frame the field is in.
            payload = str(args.get("text" if action == "type" else "option", ""))
            url = _frame_url(tab, str(args.get("ref", "")))
            return Egress("url", _host(url) or "(no host)", payload)
        sent = await self._sends(tab, args)
        if not sent or not sent.get("url"):
            return None
        url, data = str(sent["url"]), str(sent.get("data", ""))
        return Egress("url", _host(url) or "(no host)", f"{url} {data}".strip())

    async def _sends(self, tab: Tab, args: dict[str, Any]) -> dict[str, Any] | None:
        try:
            if args.get("action") == "click":
                frame = tab.check(str(args.get("ref", "")))
                return await frame.call("sends", str(args.get("ref", "")))
            if args.get("key") == "Enter":
                sent = await tab.call("sendsFocused")
                for frame in [] if sent else tab.frames.read():
                    sent = await frame.call("sendsFocused", True)
                    if sent:
                        break
                return sent
        except (StaleReference, CdpError, PageGone):
            return None  # the action itself will refuse, with its reason
        return None

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        action = str(args["action"])
        missing = _missing(action, args)
        if missing:
            return ToolResult.error(missing)
        if action == "open":
            refused = await self._host.refusal(str(args["url"]))
            if refused:
                return ToolResult.error(f"not opened: {args['url']}: {refused}")
        try:
            async with self._host.using(), asyncio.timeout(self._host.settings.action_timeout):
                return await self._run(action, args, ctx)
        except BrowserUnavailable as exc:
            return ToolResult.error(str(exc))
        except (ActionFailed, StaleReference) as exc:
            return ToolResult.error(str(exc))
        except TimeoutError:
            return ToolResult.error(
                f"{action} timed out after {self._host.settings.action_timeout:g} s "
                "(tools.browser.action_timeout); the page may still be busy"
            )
        except (PageGone, ConnectionClosed) as exc:
            return ToolResult.error(f"{action} failed: {exc}; open the page again")
        except CdpError as exc:
            return ToolResult.error(f"{action} failed in the browser: {exc}")

    async def _run(self, action: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if action == "close":
            return await self._close(ctx)
        tab, note = await self._host.tab(ctx.session_id, open_one=action in ("open", "snapshot"))
        if tab is None:
            return ToolResult.error(note + "no page is open in this conversation; open a URL first")
        deadline = asyncio.get_running_loop().time() + self._host.settings.action_timeout
        actions = Actions(tab, deadline, self._host.settings.snapshot_tokens)
        result = await self._dispatch(actions, action, args)
        if note:
            return ToolResult(note + result.content, result.status, images=result.images)
        return result

    async def _dispatch(self, actions: Actions, action: str, args: dict[str, Any]) -> ToolResult:
        ref = str(args.get("ref", ""))
        if action == "open":
            return await actions.open(str(args["url"]))
        if action == "snapshot":
            return ToolResult(await actions.snapshot(int(args.get("page") or 1)))
        if action == "click":
            return await actions.click(ref)
        if action == "type":
            return await actions.type(ref, str(args["text"]), bool(args.get("submit")))
        if action == "select":
            return await actions.select(ref, str(args["option"]))
        if action == "press":
            return await actions.press(str(args["key"]))
        if action == "scroll":
            return await actions.scroll(str(args.get("direction") or "down"))
        if action == "wait_for":
            return await actions.wait_for(str(args["text"]))
        if action == "back":
            return await actions.back()
        return await actions.screenshot(self._host.plan.workspace)

    async def _close(self, ctx: ToolContext) -> ToolResult:
        closing = await self._host.current(ctx.session_id)
        if closing is None:
            return ToolResult("No tab was open in this conversation.")
        shown = await self._host.close_tab(ctx.session_id)
        now = f"the tab showing {shown.url} is current now" if shown else "no tab is open now"
        return ToolResult(f"Closed the tab that showed {closing.url}; {now}.")


def _missing(action: str, args: dict[str, Any]) -> str:
    needs = {"open": "url", "type": "text", "select": "option", "press": "key", "wait_for": "text"}
    if action in _NEED_REF and not args.get("ref"):
        return f"{action} needs `ref`: a reference like e3 from a snapshot"
    field = needs.get(action)
    if field and field not in args:
        return f"{action} needs `{field}`"
    return ""


def _frame_url(tab: Tab, ref: str) -> str:
    """The address of the document `ref` is in (the tab's, unless it is in a frame)."""
    try:
        frame = tab.check(ref)
    except StaleReference:
        return tab.url  # the action itself will refuse
    return tab.url if frame is tab.main else frame.url


def _host(url: str) -> str:
    try:
        return (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return ""
