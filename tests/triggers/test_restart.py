"""Deliveries survive the daemon: `kill -9` after the `202` and the turn runs once after the
restart, its answer delivered once. A real `countbot run` process, since only a process can die."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import yaml

from countbot.config.settings import Settings
from tests.channels.daemon import ChannelDaemon
from tests.channels.drivers import TelegramDriver
from tests.channels.harness import ALICE
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.triggers.conftest import ISSUE, body_of, hooks_config, standard_headers
from tests.web.conftest import WAIT


class TriggerProcess(ChannelDaemon):
    """`countbot run` with the Telegram fake as the owner's chat and the tests' webhooks."""

    def write_config(self) -> Path:
        path = super().write_config()
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["triggers"] = hooks_config()
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        return path

    @property
    def base(self) -> str:
        found = re.findall(r"http://127\.0\.0\.1:\d+", "".join(self.log))
        return found[-1]

    def events(self) -> list[tuple[str, int]]:
        path = self.settings.data_dir / "countbot.db"
        with sqlite3.connect(path, timeout=5) as conn:
            query = "SELECT status, attempts FROM trigger_events ORDER BY id"
            rows = conn.execute(query).fetchall()
        return [(str(status), int(attempts)) for status, attempts in rows]


@pytest.fixture
async def telegram() -> AsyncIterator[TelegramDriver]:
    driver = TelegramDriver()
    await driver.open()
    try:
        yield driver
    finally:
        await driver.close()


async def test_deliveries_cut_off_by_kill_9_run_once_after_the_restart(
    settings: Settings, tmp_path: Path, model_server: ScriptedModelServer, telegram: TelegramDriver
) -> None:
    # The first turn's model call never answers: the daemon dies with that turn under way and
    # the second delivery recorded (202) but not started, waiting behind it.
    model_server.script(
        Reply.hang(WAIT),
        Reply.text("Issue #7: the app crashes on start."),
        Reply.text("Issue #8: the logo is blurry."),
    )
    body = body_of(ISSUE)
    headers = standard_headers(body)
    later = body_of({**ISSUE, "issue": {"number": 8, "title": "Blurry logo"}})
    daemon = TriggerProcess(telegram, settings, tmp_path)
    try:
        await daemon.start()
        async with httpx.AsyncClient(base_url=daemon.base, trust_env=False, timeout=WAIT) as http:
            answer = await http.post("/hooks/issues", content=body, headers=headers)
            await _until(lambda: len(model_server.requests) == 1)
            signed = standard_headers(later)
            second = await http.post("/hooks/issues", content=later, headers=signed)
        assert answer.status_code == second.status_code == 202
        await daemon.kill()
        assert daemon.events() == [("running", 1), ("received", 0)]
        await daemon.start()
        assert await telegram.fake.wait_for_messages(ALICE, count=2) == [
            "Issue #7: the app crashes on start.",
            "Issue #8: the logo is blurry.",
        ]
        await _until(lambda: daemon.events() == [("delivered", 2), ("delivered", 1)])
        async with httpx.AsyncClient(base_url=daemon.base, trust_env=False, timeout=WAIT) as http:
            repeated = await http.post("/hooks/issues", content=body, headers=headers)
        assert repeated.status_code == 200
        await daemon.sigterm()
    finally:
        if daemon.process is not None and daemon.process.returncode is None:
            daemon.process.kill()
            await daemon.process.wait()
    assert len(model_server.requests) == 3
    assert len(telegram.fake.chat_messages(ALICE)) == 2


async def _until(check: object) -> None:
    assert callable(check)
    for _ in range(int(WAIT / 0.05)):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the condition never held")
