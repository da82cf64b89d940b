"""The daemon owns the browser: a dead browser is started again, and nothing is left running
after a stop or after the daemon itself was killed with `kill -9`."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

from countbot.browser.host import BrowserHost, HostPlan
from countbot.browser.tool import BrowserTool
from countbot.config.settings import BrowserSettings
from countbot.tools.base import ToolContext
from countbot.tools.workspace_guard import WorkspaceGuard
from tests.browser.conftest import needs_chromium
from tests.browser.holder import host_in
from tests.browser.site import LoopbackSite

pytestmark = needs_chromium
ROOT = Path(__file__).resolve().parents[2]
# An upper bound for processes to go on a loaded machine; a passing test never waits it out.
GONE_WITHIN = 20.0


def on_profile(folder: Path, profile: str = "data/profile") -> list[int]:
    """Processes running a browser on the profile in `folder`."""
    marker = f"--user-data-dir={folder / profile}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


async def gone(pgid: int) -> bool:
    for _ in range(int(GONE_WITHIN / 0.1)):
        if not group_alive(pgid):
            return True
        await asyncio.sleep(0.1)
    return False


async def test_a_browser_that_died_is_started_again_and_closed_when_idle(
    tmp_path: Path, site: LoopbackSite
) -> None:
    host = host_in(tmp_path, idle_minutes=0.02)
    tool = BrowserTool(host)
    ctx = ToolContext("s1", tmp_path / "workspace")
    try:
        await tool.execute({"action": "open", "url": site.url("/")}, ctx)
        assert host.chromium is not None
        first = host.chromium.process.pid
        os.killpg(first, signal.SIGKILL)
        await host.chromium.process.wait()
        again = await tool.execute({"action": "open", "url": site.url("/list")}, ctx)
        assert again.content.startswith("The browser had stopped (exit status -9)")
        assert "# Fruit" in again.content
        second = host.chromium.process.pid
        # Unused past tools.browser.idle_minutes: closed, every process of it gone.
        assert await gone(second)
        assert host.chromium is None and await gone(first)
        assert on_profile(tmp_path) == []
        later = await tool.execute({"action": "open", "url": site.url("/list")}, ctx)
        assert later.status == "ok" and not later.content.startswith("The browser had stopped")
    finally:
        await host.close()
    assert on_profile(tmp_path) == []


async def test_a_killed_daemon_leaves_no_browser_and_no_lock(
    tmp_path: Path, site: LoopbackSite
) -> None:
    for _ in range(1):
        holder = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.browser.holder",
            str(tmp_path),
            site.url("/"),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
        )
        assert holder.stdout is not None
        pid = int(await holder.stdout.readline())
        assert group_alive(pid) and on_profile(tmp_path)
        holder.kill()  # SIGKILL: the daemon gets no chance to stop its browser
        await holder.wait()
        assert await gone(pid)
        assert on_profile(tmp_path) == []
    host = host_in(tmp_path)
    try:
        result = await BrowserTool(host).execute(
            {"action": "open", "url": site.url("/list")}, ToolContext("s1", tmp_path)
        )
    finally:
        await host.close()
    assert result.status == "ok" and "# Fruit" in result.content


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="tests/run.sh installs bubblewrap")
async def test_in_the_sandbox_the_browser_sees_its_profile_and_nothing_else_of_the_instance(
    tmp_path: Path, site: LoopbackSite
) -> None:
    data = tmp_path / "data"
    (tmp_path / "workspace").mkdir()
    data.mkdir()
    (data / "countbot.db").write_text("the conversations")
    config = tmp_path / "config.yaml"
    config.write_text("model: {api_key: sk-secret}")
    host = BrowserHost(
        BrowserSettings(action_timeout=15),
        HostPlan(
            data / "browser",
            WorkspaceGuard(tmp_path / "workspace"),
            lambda: True,
            sandbox="bwrap",
            hidden=(data, tmp_path / "workspace", config),
        ),
    )
    try:
        opened = await BrowserTool(host).execute(
            {"action": "open", "url": site.url("/list")}, ToolContext("s1", tmp_path)
        )
        assert opened.status == "ok" and "# Fruit" in opened.content
        [browser] = [pid for pid in on_profile(data, "browser/profile") if _is_chromium(pid)]
        seen = Path(f"/proc/{browser}/root")
        assert (seen / str(data / "browser" / "profile").lstrip("/")).is_dir()
        assert not (seen / str(data / "countbot.db").lstrip("/")).exists()
        assert "sk-secret" not in _read(seen / str(config).lstrip("/"))
    finally:
        await host.close()


def _is_chromium(pid: int) -> bool:
    """The browser's main process (not bwrap, which carries the same arguments)."""
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return b"chrom" in argv[0] and not any(arg.startswith(b"--type=") for arg in argv)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:  # a cover the browser cannot open either
        return ""
