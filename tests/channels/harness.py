"""A real runtime, gateway and channel manager talking to the fake Telegram server and the
scripted model: what `countbot run` does with Telegram enabled, minus the web server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import yaml

from countbot.channels.manager import ChannelManager
from countbot.config.settings import Settings, TelegramSettings
from countbot.gateway.gateway import Gateway, OneLoop
from countbot.runtime.assembly import Runtime, open_runtime
from tests.channels.fake_telegram import FakeTelegram

ALICE = 100  # on the allow-list in every test that does not say otherwise


class FakePlatform(Protocol):
    """What the harness needs of a fake platform: a way to wait for the bot."""

    async def wait_until(self, check: Callable[[], bool], what: str = "condition") -> None: ...


@dataclass
class Bot:
    """The daemon side of a test: read its parts, drive it through `fake`."""

    fake: Any
    settings: Settings
    runtime: Runtime
    gateway: Gateway
    manager: ChannelManager
    channel: str = "telegram"

    def state(self) -> dict[str, Any]:
        return next(s for s in self.manager.states() if s["name"] == self.channel)


def use_fake_telegram(settings: Settings, fake: FakeTelegram, **overrides: Any) -> None:
    """Enable the Telegram channel in `settings`, pointed at `fake`."""
    values: dict[str, Any] = {
        "enabled": True,
        "token": fake.token,
        "allow_from": [str(ALICE)],
        "base_url": fake.base_url,
        "base_file_url": fake.base_file_url,
        "stream_edit_interval": 0.1,
        "poll_timeout": 2,
        **overrides,
    }
    settings.channels.telegram = TelegramSettings(**values)


@contextlib.asynccontextmanager
async def running_bot(
    settings: Settings, fake: FakePlatform, channel: str = "telegram"
) -> AsyncIterator[Bot]:
    """Start the channels the way the daemon does; stop them the way it does."""
    runtime = await open_runtime(settings)
    gateway = Gateway(
        OneLoop(runtime.agent), runtime.sessions, settings.gateway, approvals=runtime.approvals
    )
    manager = ChannelManager(runtime, gateway, restart_delay=0.2)
    bot = Bot(fake, settings, runtime, gateway, manager, channel)
    await manager.start()
    try:
        settled = ("running", "misconfigured", "rejected", "disabled")
        await fake.wait_until(lambda: bot.state()["state"] in settled, "the bot to start")
        yield bot
    finally:
        await gateway.close(5)
        await manager.stop()
        await runtime.close()


async def countbot_cli(settings: Settings, *args: str) -> tuple[int, str]:
    """Run `countbot ARGS` in a subprocess on this test's data folder; (exit status, output)."""
    config = settings.data_dir.parent / "cli-config.yaml"
    config.write_text(
        yaml.safe_dump({"workspace": str(settings.workspace), "data_dir": str(settings.data_dir)})
    )
    env = {key: value for key, value in os.environ.items() if key != "COUNTBOT_CONFIG"}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "countbot",
        *args,
        "--config",
        str(config),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, output.decode()


@contextlib.asynccontextmanager
async def telegram_bot(settings: Settings, **overrides: Any) -> AsyncIterator[Bot]:
    """A fake Telegram server and a bot polling it, allowing ALICE unless told otherwise."""
    fake = FakeTelegram()
    await fake.start()
    try:
        use_fake_telegram(settings, fake, **overrides)
        async with running_bot(settings, fake) as bot:
            yield bot
    finally:
        await fake.stop()
