"""The chat page as a person sees it, found by the UI's `data-testid` attributes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Dialog, Locator, Page, Response, WebSocket, expect

from tests.web.conftest import Daemon

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
# A raw exception's text reaching the page: what a person can do nothing with. Every answer of
# the daemon's API and every WebSocket frame is looked at for these across the browser suite.
RAW_EXCEPTION = re.compile(
    r"\b(?:Errno|Traceback|(?:httpx|httpcore|aiohttp|anyio|asyncio|sqlite3)\.\w+|"
    r"(?:Connect|Connection|Timeout|Value|Type|Key|Attribute|Runtime|OS|FileNotFound|"
    r"Permission|Index|Assertion|Import|NotImplemented|Lookup|JSONDecode)Error)\b"
)


@dataclass
class ChatPage:
    """One browser tab on the daemon's UI, recording script errors, dialogs it raised, and raw
    exception text that reached it (`RAW_EXCEPTION`, counted among its errors)."""

    page: Page
    daemon: Daemon
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    # Dialogs are dismissed ("Cancel") unless a test sets this to answer them "OK".
    accept_dialogs: bool = False

    def __post_init__(self) -> None:
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("dialog", self._dismiss)
        self.page.on("response", self._look_at_response)
        self.page.on("websocket", self._look_at_frames)

    async def _look_at_response(self, response: Response) -> None:
        if "/api/" not in response.url:
            return
        try:
            text = await response.text()
        except Exception:  # the page moved on and the body is gone: nothing was shown
            return
        self._look_at(f"{response.request.method} {response.url}", text)

    def _look_at_frames(self, socket: WebSocket) -> None:
        socket.on("framereceived", lambda payload: self._look_at("a frame", str(payload)))

    def _look_at(self, where: str, text: str) -> None:
        found = RAW_EXCEPTION.search(text)
        if found:
            start = max(0, found.start() - 80)
            self.errors.append(f"raw exception text in {where}: …{text[start : found.end() + 80]}…")

    async def _dismiss(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        await (dialog.accept() if self.accept_dialogs else dialog.dismiss())

    def by_testid(self, testid: str) -> Locator:
        return self.page.get_by_test_id(testid)

    async def open(self) -> None:
        """Load the UI and wait until its WebSocket is connected."""
        await self.page.goto(f"{self.daemon.base}/")
        await self.wait_connected()

    async def reload(self) -> None:
        await self.page.reload()
        await self.wait_connected()

    async def wait_connected(self) -> None:
        await expect(self.by_testid("conn-state")).to_have_attribute("data-state", "open")

    async def send(self, text: str) -> None:
        await self.by_testid("composer-input").fill(text)
        await self.by_testid("send-button").click()

    def messages(self, role: str) -> Locator:
        return self.page.locator(f'[data-testid="message"][data-role="{role}"]')

    def streaming(self) -> Locator:
        """The assistant message that is still receiving text."""
        return self.page.locator('[data-testid="message"][data-streaming="true"]')

    def answer_text(self, message: Locator) -> Locator:
        return message.locator(".markdown")

    async def session_id(self) -> str:
        """The open conversation's id, as the UI remembers it across reloads."""
        value = await self.page.evaluate("localStorage.getItem('countbot.session')")
        assert isinstance(value, str) and value
        return value

    async def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        await self.page.screenshot(path=str(path), full_page=True)
        return path
