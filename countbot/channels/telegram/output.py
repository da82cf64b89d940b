"""Sending to Telegram: a chat as the shared code's `ChatOutput`, and the channel's sender for
the delivery path. Every python-telegram-bot error becomes a `SendError` saying whether and when
to try again.
"""

from __future__ import annotations

import datetime as dt
import logging
import warnings
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Message
from telegram.constants import ChatAction, ParseMode
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.warnings import PTBDeprecationWarning

from countbot.channels.door import Button, Link, LinkedChat, SendError, read_upload
from countbot.channels.telegram.markup import markdown_to_html

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_MESSAGE = 4096
# Larger images go as documents: Telegram refuses larger photos.
MAX_PHOTO_BYTES = 10_000_000
PHOTO_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".webp"})


def period_seconds(owner: object, attribute: str) -> float:
    """A PTB time period (`retry_after`, `duration`) in seconds, read without PTB's
    int-or-timedelta deprecation warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = getattr(owner, attribute)
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return float(value or 0)


async def call(request: Callable[[], Awaitable[T]]) -> T:
    """Run one Bot API request, turning its failure into a `SendError`."""
    try:
        return await request()
    except RetryAfter as exc:
        raise SendError(str(exc), retry_after=period_seconds(exc, "retry_after")) from exc
    except ChatMigrated as exc:
        detail = f"the group moved to chat {exc.new_chat_id}; use that id"
        raise SendError(detail, permanent=True) from exc
    except (BadRequest, Forbidden, InvalidToken) as exc:
        raise SendError(exc.message, permanent=True) from exc
    except (TimedOut, NetworkError, TelegramError) as exc:
        raise SendError(exc.message or type(exc).__name__) from exc


def _chat_ref(chat_id: str) -> int | str:
    """Numeric ids as numbers; `@channelname` as it is."""
    try:
        return int(chat_id)
    except ValueError:
        return chat_id


class TelegramChat(LinkedChat[Bot]):
    """One chat (a `ChatOutput`): Markdown goes out as Telegram HTML, plain text when refused."""

    def __init__(self, link: Link[Bot], chat_id: str) -> None:
        super().__init__(link, chat_id)
        self._ref = _chat_ref(chat_id)

    async def post(self, text: str, *, markdown: bool = True) -> str:
        bot = self._link.require()

        async def send(body: str, mode: str | None) -> Message:
            return await bot.send_message(self._ref, body, parse_mode=mode)

        message = await self._formatted(send, text, markdown)
        return str(message.message_id)

    async def edit(self, message_id: str, text: str, *, markdown: bool = True) -> None:
        bot = self._link.require()

        async def send(body: str, mode: str | None) -> object:
            return await bot.edit_message_text(
                body, chat_id=self._ref, message_id=int(message_id), parse_mode=mode
            )

        try:
            await self._formatted(send, text, markdown)
        except SendError as exc:
            if "not modified" not in exc.detail.lower():
                raise

    async def typing(self) -> None:
        bot = self._link.require()
        await call(lambda: bot.send_chat_action(self._ref, ChatAction.TYPING))

    async def post_buttons(self, text: str, buttons: Sequence[Button]) -> str:
        """An inline keyboard, one button a row (long labels stay readable on a phone)."""
        bot = self._link.require()
        keyboard = InlineKeyboardMarkup(
            [[InlineKeyboardButton(b.label, callback_data=b.data)] for b in buttons]
        )

        async def send(body: str, mode: str | None) -> Message:
            return await bot.send_message(self._ref, body, parse_mode=mode, reply_markup=keyboard)

        message = await self._formatted(send, text, True)
        return str(message.message_id)

    async def send_voice(self, ogg_opus: bytes) -> str:
        """A spoken reply, shown as a voice note."""
        bot = self._link.require()
        message = await call(lambda: bot.send_voice(self._ref, ogg_opus, filename="reply.ogg"))
        return str(message.message_id)

    async def send_file(self, path: Path) -> str:
        """Upload a file: pictures as photos, anything else as a document."""
        bot = self._link.require()
        data = await read_upload(path)
        if path.suffix.lower() in PHOTO_SUFFIXES and len(data) <= MAX_PHOTO_BYTES:
            message = await call(lambda: bot.send_photo(self._ref, data, filename=path.name))
        else:
            message = await call(lambda: bot.send_document(self._ref, data, filename=path.name))
        return str(message.message_id)

    @staticmethod
    async def _formatted(
        send: Callable[[str, str | None], Awaitable[T]], text: str, markdown: bool
    ) -> T:
        if not markdown:
            return await call(lambda: send(text, None))
        try:
            return await call(lambda: send(markdown_to_html(text), ParseMode.HTML))
        except SendError as exc:
            if "can't parse entities" not in exc.detail.lower():
                raise
            log.info("Telegram refused the HTML of an answer (%s); sending plain text", exc.detail)
            return await call(lambda: send(text, None))
