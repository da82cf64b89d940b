"""The Telegram channel: python-telegram-bot's Application, run by hand inside the daemon's loop.

Polling is our own loop over `getUpdates` rather than PTB's Updater: the Updater confirms updates
to Telegram as soon as it has fetched them, before anything handled them, so a crash in between
would lose them. Here an update is confirmed (the next request's `offset`) only after it was
handled, and the last handled `update_id` is stored, so a restart neither loses nor repeats one.
Network loss or a Telegram outage means retrying with backoff; only a rejected token ends `run`.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import Callable, Iterator

from telegram import Bot, CallbackQuery, Update
from telegram.error import InvalidToken, RetryAfter, TelegramError, TimedOut
from telegram.ext import Application, ApplicationBuilder

from countbot.channels.door import (
    Backoff,
    ChannelCapabilities,
    CredentialsRejected,
    PlatformChannel,
    SenderInfo,
    SendError,
    TelegramSettings,
    masked_logs,
)
from countbot.channels.telegram.output import MAX_MESSAGE, TelegramChat, call, period_seconds
from countbot.channels.telegram.updates import BotIdentity, to_incoming

log = logging.getLogger(__name__)

# httpx logs every request URL, and a Bot API URL contains the token.
_URL_LOGGERS = ("httpx",)


class TelegramChannel(PlatformChannel[TelegramSettings, Bot]):
    """Long-polls the Bot API and feeds each message to the channel's `Intake`."""

    name = "telegram"
    title = "Telegram"
    required = (("token", "get one from @BotFather"),)
    capabilities = ChannelCapabilities(
        max_message_length=MAX_MESSAGE, markup="html", edits_in_place=True, typing_indicator=True
    )
    chat_type = TelegramChat

    async def run(self, started: Callable[[], None]) -> None:
        settings = self.settings
        (token,) = self.required_values()
        # Building it makes two httpx clients, each loading the CA bundle (CPU work),
        # which on the loop stalled every session at each (re)start of the channel.
        app = await asyncio.to_thread(_application, token, settings)
        with masked_logs(self.kit.masker, _URL_LOGGERS):
            with _rejected_token():
                await app.initialize()  # getMe: a bad token or no network fails here
            try:
                bot = app.bot
                # Polling and a webhook exclude each other; this bot is polled.
                await bot.delete_webhook()
                me = BotIdentity(bot.id, bot.username)
                self.bot = f"@{me.username}"
                with self.connected(bot):
                    started()
                    await self._poll(bot, me, settings)
            finally:
                await _shut_down(app)

    async def _poll(self, bot: Bot, me: BotIdentity, settings: TelegramSettings) -> None:
        """Fetch and handle updates until cancelled; transient failures back off and retry."""
        offset = await self.kit.state.cursor(self.name) + 1
        backoff = Backoff(1.0, 30.0)
        wait = dt.timedelta(seconds=settings.poll_timeout)
        while True:
            try:
                updates = await bot.get_updates(
                    offset=offset, timeout=wait, allowed_updates=["message", "callback_query"]
                )
            except RetryAfter as exc:
                await asyncio.sleep(period_seconds(exc, "retry_after"))
                continue
            except TimedOut:
                continue  # a long poll that outlived its read timeout; just ask again
            except InvalidToken:
                raise
            except TelegramError as exc:
                self.connection = self.kit.masker.mask(f"reconnecting: {exc.message}")
                delay = backoff.next()
                log.warning(
                    "Telegram polling failed (%s); retrying in %g s", self.connection, delay
                )
                await asyncio.sleep(delay)
                continue
            backoff.reset()
            self.connection = "ok"
            for update in updates:
                if update.update_id < offset:
                    continue  # a server that ignored the offset: already handled
                await self._handle(update, bot, me, settings)
                offset = update.update_id + 1
                await self.kit.state.advance(self.name, update.update_id)

    async def _handle(
        self, update: Update, bot: Bot, me: BotIdentity, settings: TelegramSettings
    ) -> None:
        """Handle one update; a failure is logged and the update counts as handled (no loop)."""
        if update.callback_query is not None:
            await self._press(update.callback_query, bot)
            return
        message = update.message
        if message is None:
            return
        try:
            incoming = to_incoming(message, bot, me, settings.group_mode)
            await self.take(incoming)
        except Exception:
            log.exception("handling Telegram update %d failed", update.update_id)

    async def _press(self, query: CallbackQuery, bot: Bot) -> None:
        """A pressed button (an approval answer); the card itself is edited by the feed."""
        try:
            chat = query.message.chat.id if query.message is not None else None
            user = query.from_user
            sender = SenderInfo(str(user.id), user.username, user.full_name)
            answer = "This button does nothing any more."
            if chat is not None and query.data:
                answer = await self.kit.answers.press(query.data, sender, str(chat))
            await call(lambda: bot.answer_callback_query(query.id, text=answer))
        except SendError as exc:
            log.warning("answering a Telegram button press failed: %s", exc.detail)
        except Exception:
            log.exception("handling a Telegram button press failed")


def _application(token: str, settings: TelegramSettings) -> Application:  # type: ignore[type-arg]
    builder = (
        ApplicationBuilder()
        .token(token)
        .base_url(settings.base_url)
        .base_file_url(settings.base_file_url)
        .updater(None)
    )
    if settings.proxy:
        builder = builder.proxy(settings.proxy).get_updates_proxy(settings.proxy)
    return builder.build()


async def _shut_down(app: Application) -> None:  # type: ignore[type-arg]
    try:
        await app.shutdown()
    except Exception:  # closing connections to a server that is gone must not mask the cause
        log.debug("closing the Telegram connection failed", exc_info=True)


@contextlib.contextmanager
def _rejected_token() -> Iterator[None]:
    """Telegram's 401 for the bot token at getMe as the door's `CredentialsRejected`: the
    channel stops instead of retrying a token that cannot work. A 401 later, while polling, is
    a crash: the restart's getMe then tells a revoked token from a passing refusal."""
    try:
        yield
    except InvalidToken as exc:
        raise CredentialsRejected(
            "Telegram rejected the bot token (401 Unauthorized): copy it again from @BotFather"
        ) from exc
