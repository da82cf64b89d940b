"""The Skills page in a real browser shows each MCP server's state, tools and last error."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest
from playwright.async_api import Browser, expect

from countbot.config.settings import McpServerSettings, McpSettings
from tests.e2e.conftest import CHROMIUM
from tests.e2e.ui import ChatPage
from tests.web.conftest import DaemonFactory

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)
ROOT = Path(__file__).resolve().parents[2]


async def test_the_skills_page_lists_mcp_servers_in_both_languages(
    browser: Browser, start_daemon: DaemonFactory, tmp_path: Path
) -> None:
    good = McpServerSettings(
        command=sys.executable,
        args=["-m", "tests.support.mcp_server", "stdio"],
        env={"PYTHONPATH": str(ROOT)},
        tools=["echo", "add"],
    )
    broken = McpServerSettings(command=str(tmp_path / "no-such-server"))
    mcp = McpSettings(servers={"notes": good, "broken": broken})
    async with start_daemon(mcp=mcp) as daemon:
        connection = daemon.context.runtime.mcp.connections["notes"]
        assert await connection.wait_ready(30), connection.last_error
        for _ in range(400):  # the broken server's first failure, before the page loads
            if daemon.context.runtime.mcp.connections["broken"].last_error:
                break
            await asyncio.sleep(0.05)
        context = await browser.new_context(locale="en-US")
        try:
            chat = ChatPage(await context.new_page(), daemon)
            await chat.open()
            await chat.by_testid("nav-skills").click()
            notes = chat.page.locator('[data-testid="mcp-server"][data-server="notes"]')
            await expect(notes).to_contain_text("Ready")
            await expect(notes).to_contain_text("Tools: notes__add, notes__echo")
            failing = chat.page.locator('[data-testid="mcp-server"][data-server="broken"]')
            await expect(failing).to_contain_text("Restarting")
            await expect(failing.get_by_test_id("mcp-error")).to_contain_text(
                re.compile(r"Last error: .+")
            )
            await chat.by_testid("lang-switch").select_option("zh-CN")
            await expect(notes).to_contain_text("就绪")
            await expect(chat.by_testid("mcp-servers")).to_contain_text("MCP 服务器")
            assert not chat.errors, chat.errors
        finally:
            await context.close()


async def test_a_server_is_added_tested_switched_off_and_removed_from_the_page(
    browser: Browser, start_daemon: DaemonFactory
) -> None:
    async with start_daemon() as daemon:
        context = await browser.new_context(locale="en-US")
        try:
            chat = ChatPage(await context.new_page(), daemon)
            await chat.open()
            await chat.by_testid("nav-skills").click()
            section = chat.by_testid("mcp-servers")
            await expect(section).to_contain_text("No MCP servers yet")
            form = chat.by_testid("mcp-add-form")
            await form.get_by_test_id("mcp-add-name").fill("notes")
            await form.get_by_test_id("mcp-add-command").fill(sys.executable)
            await form.get_by_test_id("mcp-add-args").fill("-m tests.support.mcp_server stdio")
            await form.get_by_test_id("mcp-add-env").fill(f"PYTHONPATH={ROOT}")
            await form.get_by_test_id("mcp-add-test").click()
            status = form.get_by_test_id("mcp-add-status")
            await expect(status).to_contain_text("It works. Tools: notes__add")
            await form.get_by_test_id("mcp-add-save").click()
            notes = chat.page.locator('[data-testid="mcp-server"][data-server="notes"]')
            await expect(notes).to_have_attribute("data-state", "ready")
            await expect(notes).to_contain_text("notes__echo")
            assert daemon.context.runtime.tools.get("notes__echo") is not None
            await chat.screenshot("mcp_added")

            await notes.get_by_test_id("mcp-toggle").uncheck()
            await expect(notes).to_have_attribute("data-state", "disabled")
            assert daemon.context.runtime.tools.get("notes__echo") is None
            chat.accept_dialogs = True
            await notes.get_by_test_id("mcp-remove").click()
            await expect(notes).to_have_count(0)
            await expect(section).to_contain_text("No MCP servers yet")
            assert daemon.settings.config_path is not None
            assert "notes" not in daemon.settings.config_path.read_text(encoding="utf-8")
            assert not chat.errors, chat.errors
        finally:
            await context.close()
