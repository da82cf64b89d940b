"""Each platform's fake behind one interface, so the scenario matrix (`test_matrix.py`) runs on
every platform: a new platform gets the whole matrix by writing its fake and a driver here.

A driver speaks for Alice (allowed) and Mallory (a stranger) in their private chats, re-sends an
event as the platform would, refuses the bot's sends for a while (the answer stays owed), and
drops the connection (an outage).
"""

from __future__ import annotations

import html
import importlib.util
import re
import socket
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import trustme

from countbot.config.settings import QQSettings, Settings
from tests.channels.fake_telegram import FakeTelegram, FakeUser
from tests.channels.harness import use_fake_telegram
from tests.channels.loopback import wait_until

TAG = re.compile(r"<[^>]+>")


class Driver(ABC):
    """One platform's fake, as the matrix drives it. `me` is Alice's private chat.

    The defaults fit the fakes that share a shape (`start`/`stop`, `connected`, `chat_messages`,
    `push`, `outage`/`recover`, refusals); a driver overrides what its fake does otherwise.
    """

    name: ClassVar[str]
    sdk: ClassVar[str | None] = None
    me: ClassVar[str]
    stranger_chat: ClassVar[str]
    limit: ClassVar[int]
    fences: ClassVar[bool] = True
    # Approval questions come with buttons (or mail's note to use the web UI); other chats get
    # them as text and answer with a typed `/approve CODE`.
    buttons: ClassVar[bool] = False
    # Where the daemon's process must trust the fake's TLS certificate (WeCom's SDK).
    ca_pem: str | None = None
    # The setting whose token the fake checks and refuses when wrong ("" where it checks none).
    token_key: ClassVar[str] = ""
    fake: Any

    @classmethod
    def available(cls) -> bool:
        return cls.sdk is None or importlib.util.find_spec(cls.sdk) is not None

    @abstractmethod
    def make_fake(self) -> Any: ...

    async def open(self) -> None:
        self.fake = self.make_fake()
        await self.fake.start()

    async def close(self) -> None:
        await self.fake.stop()

    @abstractmethod
    def configure(self, settings: Settings) -> None:
        """Enable the channel in `settings`, pointed at the fake, Alice allowed."""

    async def ready(self) -> None:
        """Wait until the bot is connected to the fake."""
        await wait_until(lambda: self.connected, f"{self.name}: the bot to connect")

    @property
    def connected(self) -> bool:
        return bool(self.fake.connected)

    @abstractmethod
    async def says(self, text: str, *, picture: bytes | None = None) -> Any:
        """Alice writes `text` in her private chat; the event, for `again`."""

    @abstractmethod
    async def stranger_says(self, text: str, *, picture: bytes | None = None) -> None:
        """Mallory (not allowed) writes `text` in his private chat, with `picture` if given."""

    def downloads(self) -> int:
        """How many files users sent the bot fetched from the platform so far."""
        return int(self.fake.files_served)

    async def again(self, event: Any) -> None:
        """The platform delivers `event` once more (it thinks it was not handled)."""
        self.fake.push(event)

    def texts(self, chat: str) -> list[str]:
        """What the bot's messages in `chat` show now."""
        return list(self.fake.chat_messages(chat))

    def answers(self) -> list[str]:
        return self.texts(self.me)

    @abstractmethod
    def hold(self) -> None:
        """Refuse the bot's messages until `release` (an answer stays owed)."""

    def release(self) -> None:
        self.fake._refusals.clear()

    async def drop(self) -> None:
        """The connection drops and cannot come back until `recover`."""
        await self.fake.outage()

    async def recover(self) -> None:
        self.fake.recover()


class TelegramDriver(Driver):
    """Telegram shows the bot's HTML: `texts` is what the user reads (tags gone, entities read)."""

    name = "telegram"
    token_key = "token"
    me = "100"
    stranger_chat = "666"
    limit = 4096
    buttons = True
    fences = False

    _polled = 0

    def make_fake(self) -> Any:
        return FakeTelegram()

    def configure(self, settings: Settings) -> None:
        use_fake_telegram(settings, self.fake)

    @property
    def connected(self) -> bool:
        return len(self.fake.calls_to("getUpdates")) > self._polled

    async def ready(self) -> None:
        self._polled = len(self.fake.calls_to("getUpdates"))
        await super().ready()

    async def says(self, text: str, *, picture: bytes | None = None) -> Any:
        if picture is not None:
            return self.fake.user_sends_photo(picture, caption=text)
        return self.fake.user_says(text)

    async def stranger_says(self, text: str, *, picture: bytes | None = None) -> None:
        mallory = FakeUser(666, "Mallory", "mallory")
        if picture is not None:
            self.fake.user_sends_photo(picture, caption=text, user=mallory)
        else:
            self.fake.user_says(text, user=mallory)

    def downloads(self) -> int:
        return len(self.fake.calls_to("getFile")) + len(self.fake.calls_to("download"))

    async def again(self, event: Any) -> None:
        self.fake.forget_confirmations(int(event))

    def texts(self, chat: str) -> list[str]:
        return [html.unescape(TAG.sub("", text)) for text in self.fake.chat_messages(chat)]

    def hold(self) -> None:
        for method in ("sendMessage", "editMessageText"):
            self.fake.refuse(method, status=400, description="held by the test", times=10_000)

    async def drop(self) -> None:
        await self.fake.stop()

    async def recover(self) -> None:
        await self.fake.start()


class DiscordDriver(Driver):
    name = "discord"
    token_key = "token"
    sdk = "discord"
    me = "600000000000000001"
    stranger_chat = "600000000000000666"
    limit = 2000
    buttons = True

    def make_fake(self) -> Any:
        from tests.channels.fake_discord import FakeDiscord

        return FakeDiscord()

    def configure(self, settings: Settings) -> None:
        from tests.channels.discord.conftest import use_fake_discord

        use_fake_discord(settings, self.fake)

    async def says(self, text: str, *, picture: bytes | None = None) -> Any:
        return self.fake.user_says(
            text, user=500000000000000001, channel=int(self.me), picture=picture
        )

    async def stranger_says(self, text: str, *, picture: bytes | None = None) -> None:
        user, chat = 500000000000000666, int(self.stranger_chat)
        self.fake.user_says(text, user=user, channel=chat, name="mallory", picture=picture)

    async def again(self, event: Any) -> None:
        self.fake.dispatch("MESSAGE_CREATE", event)

    def hold(self) -> None:
        self.fake.refuse(self.me, 403, times=10_000)

    def release(self) -> None:
        self.fake.refuse(self.me, 403, times=0)


class SlackDriver(Driver):
    name = "slack"
    token_key = "bot_token"
    sdk = "slack_sdk"
    me = "D0001"
    stranger_chat = "D0666"
    limit = 4000
    buttons = True

    def make_fake(self) -> Any:
        from tests.channels.fake_slack import FakeSlack

        return FakeSlack()

    def configure(self, settings: Settings) -> None:
        from tests.channels.slack.conftest import use_fake_slack

        use_fake_slack(settings, self.fake)

    async def says(self, text: str, *, picture: bytes | None = None) -> Any:
        return self.fake.user_says(text, user="UALICE01", channel=self.me, picture=picture)

    async def stranger_says(self, text: str, *, picture: bytes | None = None) -> None:
        self.fake.user_says(text, user="UMALLORY", channel=self.stranger_chat, picture=picture)

    async def again(self, event: Any) -> None:
        self.fake.redeliver(event)

    def hold(self) -> None:
        for method in ("chat.postMessage", "chat.update"):
            self.fake.refuse(method, "channel_not_found", times=10_000)


class FeishuDriver(Driver):
    name = "feishu"
    sdk = "lark_oapi"
    me = "oc_p2p_ou_alice"
    stranger_chat = "oc_p2p_ou_mallory"
    limit = 6000

    def make_fake(self) -> Any:
        from tests.channels.fake_feishu import FakeFeishu

        return FakeFeishu()

    def configure(self, settings: Settings) -> None:
        from tests.channels.feishu.conftest import use_fake_feishu

        use_fake_feishu(settings, self.fake)

    async def says(self, text: str, *, picture: bytes | None = None) -> Any:
        return self.fake.user_says(text, user="ou_alice", picture=picture)

    async def stranger_says(self, text: str, *, picture: bytes | None = None) -> None:
        self.fake.user_says(text, user="ou_mallory", picture=picture)

    def downloads(self) -> int:
        return self.fake.calls.count("resource")

    def hold(self) -> None:
        self.fake.refuse("send", 10_000)
        self.fake.refuse("patch", 10_000)


class DingTalkDriver(Driver):
    name = "dingtalk"
    sdk = "dingtalk_stream"
    me = "private:staff_alice"
    stranger_chat = "private:staff_mallory"
    limit = 4000

    def make_fake(self) -> Any:
        from tests.channels.fake_dingtalk import FakeDingTalk

        return FakeDingTalk()

    def configure(self, settings: Settings) -> None:
        from tests.channels.dingtalk.conftest import use_fake_dingtalk

        use_fake_dingtalk(settings, self.fake)

    async def says(self, text: str, *, picture: bytes | None = None) -> Any:
        return self.fake.user_says(text, staff_id="staff_alice", picture=picture)

    async def stranger_says(self, text: str, *, picture: bytes | None = None) -> None:
        self.fake.user_says(text, staff_id="staff_mallory", nick="Mallory", picture=picture)

    def downloads(self) -> int:
        return self.fake.calls.count("download")

    def hold(self) -> None:
        self.fake.refuse("send", 10_000)


class WeComDriver(Driver):
    name = "wecom"
    sdk = "aibot"
    me = "alice.zhang"
    stranger_chat = "mallory.li"
    limit = 6000

    def make_fake(self) -> Any:
        from tests.channels.fake_wecom import FakeWeCom, trust_fake_wecom

        ca = trustme.CA()
        trust_fake_wecom(ca)
        self.ca_pem = ca.cert_pem.bytes().decode()
        return FakeWeCom(ca)

    def configure(self, settings: Settings) -> None:
        from tests.channels.wecom.conftest import use_fake_wecom

        use_fake_wecom(settings, self.fake)

    async def says(self, text: str, *, picture: bytes | None = None) -> Any:
        return self.fake.user_says(text, user=self.me, picture=picture)

    async def stranger_says(self, text: str, *, picture: bytes | None = None) -> None:
        self.fake.user_says(text, user=self.stranger_chat, picture=picture)

    def hold(self) -> None:
        for cmd in ("aibot_respond_msg", "aibot_send_msg"):
            self.fake.refuse(cmd, 10_000)


class QQDriver(Driver):
    """The fake is the QQ client: it connects to the daemon's OneBot endpoint (a fixed port, so
    it finds the daemon again after a restart)."""

    name = "qq"
    me = "private:100"
    stranger_chat = "private:66666"
    limit = 3000
    fences = False

    def make_fake(self) -> Any:
        from tests.channels.fake_onebot import FakeQQClient

        self.port = _free_port()
        return FakeQQClient()

    def configure(self, settings: Settings) -> None:
        from tests.channels.qq.conftest import use_fake_qq

        use_fake_qq(settings, self.fake, port=self.port)

    async def ready(self) -> None:
        endpoint = f"ws://127.0.0.1:{self.port}{QQSettings().path}"
        await wait_until(lambda: _listening(self.port), "the OneBot endpoint to listen")
        await self.fake.disconnect()  # a connection to a daemon that is gone, if any
        await self.fake.connect(endpoint)
        await super().ready()

    async def says(self, text: str, *, picture: bytes | None = None) -> Any:
        return await self.fake.user_says(text, user=100, picture=picture)

    async def stranger_says(self, text: str, *, picture: bytes | None = None) -> None:
        await self.fake.user_says(text, user=66666, nickname="Mallory", picture=picture)

    async def again(self, event: Any) -> None:
        await self.fake.resend(event)

    def hold(self) -> None:
        self.fake.refuse("send_private_msg", 10_000)

    async def drop(self) -> None:
        await self.fake.disconnect()

    async def recover(self) -> None:
        """The client connects again by itself in `ready`."""


class EmailDriver(Driver):
    name = "email"
    sdk = "aiosmtpd"
    me = "alice@example.com"
    stranger_chat = "mallory@example.com"
    limit = 50_000
    buttons = True
    fences = False

    def make_fake(self) -> Any:
        from tests.channels.fake_mail import FakeMail

        return FakeMail()

    def configure(self, settings: Settings) -> None:
        from tests.channels.email.conftest import use_fake_mail

        use_fake_mail(settings, self.fake)

    async def says(self, text: str, *, picture: bytes | None = None) -> Any:
        from tests.channels.fake_mail import mail

        attachment = ("photo.jpg", "image/jpeg", picture) if picture is not None else None
        return await self.fake.deliver(mail(self.me, text, attachment=attachment))

    async def stranger_says(self, text: str, *, picture: bytes | None = None) -> None:
        from tests.channels.fake_mail import mail

        attachment = ("photo.jpg", "image/jpeg", picture) if picture is not None else None
        await self.fake.deliver(mail(self.stranger_chat, text, attachment=attachment))

    def downloads(self) -> int:
        """A mail carries its files: what must not happen is saving them (the media folder)."""
        return 0

    async def again(self, event: Any) -> None:
        await self.fake.deliver(event)  # a second copy with the same Message-ID

    def texts(self, chat: str) -> list[str]:
        return self.fake.texts_to(chat)

    def hold(self) -> None:
        self.fake.refused.add(self.me)

    def release(self) -> None:
        self.fake.refused.discard(self.me)

    async def recover(self) -> None:
        await self.fake.recover()


DRIVERS: dict[str, type[Driver]] = {
    driver.name: driver
    for driver in (
        TelegramDriver,
        DiscordDriver,
        SlackDriver,
        FeishuDriver,
        DingTalkDriver,
        WeComDriver,
        QQDriver,
        EmailDriver,
    )
}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(("127.0.0.1", port)) == 0
