"""Main's browser, in the real daemon beside other agents: it never sees their houses."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.agents.conftest import Agents, three_agents
from tests.browser.conftest import needs_chromium
from tests.browser.site import LoopbackSite
from tests.channels.fake_telegram import FakeTelegram
from tests.support.scripted_model import Reply, ScriptedModelServer

pytestmark = [
    needs_chromium,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="tests/run.sh installs bubblewrap"),
]


@pytest.fixture
async def browsing_agents(
    tmp_path: Path, model_server: ScriptedModelServer, fake_telegram: FakeTelegram
) -> AsyncIterator[Agents]:
    """The other agents' houses outside /tmp, which the browser's sandbox hides whole anyway."""
    tools = {"web": {"allow_private": True}, "exec": {"sandbox": "bwrap"}}
    houses = Path(tempfile.mkdtemp(prefix="countbot-houses-", dir="/var/tmp"))
    try:
        async with three_agents(
            tmp_path, model_server, fake_telegram, houses=houses, tools=tools
        ) as running:
            yield running
    finally:
        shutil.rmtree(houses)


def _browser_root(data: Path) -> Path:
    """The file system the daemon's Chromium sees (its main process, not bwrap)."""
    marker = f"--user-data-dir={data / 'browser' / 'profile'}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            marker in argv
            and b"chrom" in argv[0]
            and not any(a.startswith(b"--type=") for a in argv)
        ):
            return entry / "root"
    raise AssertionError("the daemon's browser is not running")


async def test_mains_browser_sees_no_other_agents_house(browsing_agents: Agents) -> None:
    agents = browsing_agents
    family_notes = agents.workspaces["family"] / "notes.txt"
    site = LoopbackSite()
    try:
        # The user names the site: the data-flow gate lets the page open without a question.
        call = ("browser", json.dumps({"action": "open", "url": site.url("/list")}))
        agents.model.script(Reply.tool_calls(call), Reply.text("ok"))
        client = await agents.daemon.ws()
        try:
            await client.send(
                {"type": "message", "session_id": "look", "content": f"open {site.url('/list')}"}
            )
            await client.until("done")
        finally:
            await client.close()
        [opened] = [frame["result"] for frame in client.of("tool_result")]
        assert "# Fruit" in opened  # (and a file:// address is refused, whoever asks)
        seen = _browser_root(agents.daemon.settings.data_dir)
        assert (seen / str(agents.workspaces["main"]).lstrip("/")).is_dir()
        assert not (seen / str(family_notes).lstrip("/")).exists()
        assert not (seen / str(agents.workspaces["work"] / "notes.txt").lstrip("/")).exists()
    finally:
        site.close()
