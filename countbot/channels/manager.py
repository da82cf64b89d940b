"""Runs the enabled chat channels inside the daemon: builds, starts, restarts and reports them.

Each enabled channel gets its shared pieces (intake, session feed, access, commands: wired by
`kit/wiring.py`, imported with the first enabled channel) and a supervisor task: while it runs,
its sender is registered with the delivery path; when it crashes it is restarted after an
exponential backoff (reset after a run that lasted a while), and the reason is shown in words
(`kit/failures.py`). A channel that cannot work as configured (no token) is reported, not
started; one whose platform rejected its credentials is stopped and says so, not retried; the
daemon runs on.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from countbot.channels.kit.backoff import Backoff
from countbot.channels.kit.failures import CredentialsRejected, failure_of
from countbot.config.fields import is_secret
from countbot.config.loader import MASK
from countbot.config.settings import ChannelSettings, channel_section_path, platform_and_account
from countbot.config.structs import choice_fields, to_data
from countbot.gateway.gateway import Gateway
from countbot.runtime.assembly import Runtime
from countbot.store.channel_state import ChannelStateStore
from countbot.store.pairing import PairingStore

if TYPE_CHECKING:
    from countbot.channels.kit.base import Channel
    from countbot.channels.kit.feed import SessionFeed
    from countbot.channels.kit.intake import Router
    from countbot.channels.kit.wiring import ChannelWiring

log = logging.getLogger(__name__)

State = Literal[
    "disabled", "misconfigured", "starting", "running", "restarting", "rejected", "stopped"
]

# A run this long proves the channel works: the next crash starts the backoff from the beginning.
STABLE_RUN = 60.0
MAX_RESTART_DELAY = 300.0
# Seconds answers still being shown get when the daemon stops.
SETTLE_GRACE = 5.0
# Seconds a channel gets to close its client and end its task before it is abandoned.
STOP_BOUND = 3.0


# Each platform's channel class, its module imported only when the platform is enabled (a
# platform's SDK is slow to import, wasted while the platform is off).
def _telegram() -> type[Channel]:
    from countbot.channels.telegram.channel import TelegramChannel

    return TelegramChannel


def _qq() -> type[Channel]:
    from countbot.channels.qq.channel import QQChannel

    return QQChannel


def _feishu() -> type[Channel]:
    from countbot.channels.feishu.channel import FeishuChannel

    return FeishuChannel


def _dingtalk() -> type[Channel]:
    from countbot.channels.dingtalk.channel import DingTalkChannel

    return DingTalkChannel


def _wecom() -> type[Channel]:
    from countbot.channels.wecom.channel import WeComChannel

    return WeComChannel


def _slack() -> type[Channel]:
    from countbot.channels.slack.channel import SlackChannel

    return SlackChannel


def _discord() -> type[Channel]:
    from countbot.channels.discord.channel import DiscordChannel

    return DiscordChannel


def _email() -> type[Channel]:
    from countbot.channels.email.channel import EmailChannel

    return EmailChannel


CHANNEL_TYPES: dict[str, Callable[[], type[Channel]]] = {
    "telegram": _telegram,
    "qq": _qq,
    "feishu": _feishu,
    "dingtalk": _dingtalk,
    "wecom": _wecom,
    "slack": _slack,
    "discord": _discord,
    "email": _email,
}


def channel_type(name: str) -> type[Channel]:
    """Platform `name`'s channel class, its module imported now."""
    return CHANNEL_TYPES[name]()


def _load(name: str) -> tuple[type[Channel], type[ChannelWiring]]:
    """Channel `name`'s platform class and the shared pipeline's wiring (blocking: imports)."""
    from countbot.channels.kit.wiring import ChannelWiring

    return channel_type(platform_and_account(name)[0]), ChannelWiring


@dataclass(slots=True)
class ChannelStatus:
    state: State
    detail: str = ""
    since: float = field(default_factory=time.time)
    restarts: int = 0
    retry_at: float | None = None
    # Why the last run ended, as `kit/failures.py` names it ("" while nothing failed).
    problem: str = ""

    def move(
        self, state: State, detail: str = "", retry_at: float | None = None, problem: str = ""
    ) -> None:
        self.state, self.detail, self.retry_at, self.since = state, detail, retry_at, time.time()
        self.problem = problem


@dataclass(slots=True)
class _Entry:
    name: str
    status: ChannelStatus
    channel: Channel | None = None
    feed: SessionFeed | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)


class ChannelManager:
    """The daemon's channels; `start()` after the gateway exists, `stop()` after it closed."""

    def __init__(
        self,
        runtime: Runtime,
        gateway: Gateway,
        *,
        restart_delay: float = 1.0,
        web_url: str = "",
        router: Router | None = None,
    ) -> None:
        """`web_url` is where the daemon serves its UI (guidance links to its pages); `router`
        picks each message's agent (None: `main` answers every message)."""
        self._runtime = runtime
        self._router = router
        self._web_url = web_url
        self._gateway = gateway
        self._restart_delay = restart_delay
        self._pairing = PairingStore(runtime.db)
        self._state = ChannelStateStore(runtime.db)
        self._entries: dict[str, _Entry] = {}
        self._wiring: ChannelWiring | None = None  # made with the first enabled channel

    async def start(self) -> None:
        """Start the enabled channels (each bot account its own) in the background; returns at
        once."""
        for name in self._runtime.settings.channels.names():
            self._start_one(name)

    async def restart(self, platform: str) -> None:
        """Stop `platform`'s channels (its own bot and its accounts) and start them again with
        their current sections (set up from the browser); a disabled one just stops."""
        for name in [name for name in self._entries if _platform(name) == platform]:
            entry = self._entries.pop(name)
            if entry.tasks:
                await self._stop_one(entry)
        for name in self._runtime.settings.channels.names():
            if _platform(name) == platform:
                self._start_one(name)

    def _start_one(self, name: str) -> None:
        entry = self._entries[name] = _Entry(name, ChannelStatus("disabled"))
        if self._section(name).enabled:
            self._runtime.deliveries.expect(name)
            entry.status.move("starting")
            entry.tasks.append(asyncio.create_task(self._boot(entry), name=name))

    async def stop(self) -> None:
        """Let answers in flight reach their chats (`SETTLE_GRACE`), then stop every channel at
        once, each within `STOP_BOUND` seconds whatever its platform library does."""
        entries = [e for e in self._entries.values() if e.tasks]
        feeds = [e.feed.settle(SETTLE_GRACE) for e in entries if e.feed is not None]
        await asyncio.gather(*feeds)
        await asyncio.gather(*(self._stop_one(entry) for entry in entries))

    async def _stop_one(self, entry: _Entry) -> None:
        """Close the client first (a library may swallow the cancellation of a task blocked in
        it), then cancel; what still runs after `STOP_BOUND` is left behind, with a log line."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STOP_BOUND
        if entry.channel is not None:
            closing = asyncio.create_task(entry.channel.close())
            done, _ = await asyncio.wait({closing}, timeout=STOP_BOUND / 2)
            if closing in done and not closing.cancelled() and closing.exception() is not None:
                log.warning("closing channel %s failed: %s", entry.name, closing.exception())
            elif closing not in done:
                closing.cancel()
        for task in entry.tasks:
            task.cancel()
        if entry.tasks:
            _, pending = await asyncio.wait(entry.tasks, timeout=max(0.1, deadline - loop.time()))
            if pending:
                log.warning(
                    "channel %s did not stop within %g s; abandoned", entry.name, STOP_BOUND
                )
        entry.tasks.clear()
        entry.status.move("stopped")
        self._runtime.deliveries.forget(entry.name)

    def states(self) -> list[dict[str, Any]]:
        """Every known channel for GET /api/channels (a bot account as `<platform>.<account>`,
        not in its platform's `settings`); secrets read `********`."""
        shown = []
        for name in self._runtime.settings.channels.names():
            entry = self._entries.get(name)
            status = entry.status if entry is not None else ChannelStatus("disabled")
            channel = entry.channel if entry is not None else None
            shown.append(
                {
                    "name": name,
                    "enabled": self._section(name).enabled,
                    **asdict(status),
                    "capabilities": asdict(channel.capabilities) if channel else None,
                    **(channel.details() if channel else {}),
                    "settings": _masked(name, self._section(name)),
                    "choices": choice_fields(type(self._section(name))),
                }
            )
        return shown

    # --- running one channel ------------------------------------------------------------------

    def _section(self, name: str) -> ChannelSettings:
        """Channel `name`'s section as the settings hold it now (an account removed from the
        config while its channel still runs reads as a disabled one)."""
        section = self._runtime.settings.channels.section(name)
        return section if section is not None else ChannelSettings()

    async def _boot(self, entry: _Entry) -> None:
        # A platform library and the channels' pipeline take a while to import: not on the loop.
        kind, wiring = await asyncio.to_thread(_load, entry.name)
        problem = kind.problem(self._section(entry.name), channel_section_path(entry.name))
        if problem is not None:
            entry.status.move("misconfigured", problem)
            log.warning("channel %s is enabled but not started: %s", entry.name, problem)
            return
        if self._wiring is None:
            runtime = self._runtime
            parts = (runtime, self._gateway, self._state, self._pairing, self._web_url)
            self._wiring = wiring.of(*parts, self._router)
        entry.channel, entry.feed = self._wiring.build(
            entry.name, kind, lambda: self._section(entry.name)
        )
        entry.tasks.append(asyncio.create_task(entry.feed.run(), name=f"{entry.name}-feed"))
        await self._supervise(entry, entry.channel)

    async def _supervise(self, entry: _Entry, channel: Channel) -> None:
        loop = asyncio.get_running_loop()
        backoff = Backoff(self._restart_delay, MAX_RESTART_DELAY)
        deliveries = self._runtime.deliveries
        while True:
            entry.status.move("starting")
            began = loop.time()

            def started() -> None:
                entry.status.move("running")
                deliveries.register(channel.sender)
                self._catch_up(entry, channel)

            problem = ""
            try:
                await channel.run(started)
                detail = "stopped by itself"
            except Exception as exc:
                failure = failure_of(exc)
                detail, problem = self._runtime.masker.mask(failure.words), failure.code
                log.warning(
                    "channel %s crashed: %s", entry.name, self._runtime.masker.mask(repr(exc))
                )
                if isinstance(exc, CredentialsRejected):
                    entry.status.move("rejected", detail, problem=problem)
                    return  # a token the platform refused stays refused: Set up restarts it
            finally:
                deliveries.unregister(channel.sender.name)
            if loop.time() - began >= STABLE_RUN:
                backoff.reset()
            delay = backoff.next()
            entry.status.restarts += 1
            entry.status.move("restarting", detail, time.time() + delay, problem)
            await asyncio.sleep(delay)

    def _catch_up(self, entry: _Entry, channel: Channel) -> None:
        """Deliver, in the background, what earlier runs of the daemon owed this channel."""
        outbox = self._runtime.deliveries.outbox
        if outbox is None:
            return
        task = asyncio.create_task(outbox.catch_up(channel.sender), name=f"{entry.name}-owed")
        entry.tasks.append(task)
        task.add_done_callback(_log_failure)
        task.add_done_callback(lambda done: done in entry.tasks and entry.tasks.remove(done))


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("delivering owed answers failed", exc_info=task.exception())


def _platform(name: str) -> str:
    return platform_and_account(name)[0]


def _masked(name: str, settings: ChannelSettings) -> dict[str, Any]:
    data = to_data(settings)
    data.pop("accounts", None)  # each account is a channel of its own in the list
    platform, _, account = name.partition(".")
    where = ("channels", platform, "accounts", account) if account else ("channels", platform)
    for key in data:
        if is_secret((*where, key)):
            secret = getattr(settings, key)
            data[key] = MASK if secret is not None and secret.get_secret_value() else ""
    return data
