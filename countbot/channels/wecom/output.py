"""Sending to WeCom through the AI bot's long connection: a chat as the shared code's
`ChatOutput`, and the channel's sender for the delivery path.

In reply to a user's message an AI bot can stream: one `stream` message whose content is
replaced while the answer is written and which ends with `finish`. So drafts (plain) update the
stream and the final text (Markdown) finishes it. Without a message to reply to (a scheduled
job), or when the reply window has closed, answers go out as proactive Markdown messages, which
cannot be edited. The long connection cannot send files.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

from countbot.channels.door import Link, LinkedChat, SendError

# A stream message holds at most 20480 bytes of UTF-8: 6000 characters of Chinese fit.
MAX_MESSAGE = 6000
# WeCom accepts stream replies for a while after the user's message; stay well inside it.
REPLY_WINDOW = 300.0
STREAM = "stream:"


# The SDK's `WSClient` of the live connection.


async def _call(request: Any) -> Any:
    """Await one SDK send; its failures become `SendError`s."""
    try:
        return await request
    except TimeoutError as exc:
        raise SendError("WeCom did not confirm the message in time") from exc
    except RuntimeError as exc:  # the SDK's refusals ("errcode=...") and a closed connection
        detail = str(exc)
        raise SendError(f"WeCom refused: {detail}", permanent="errcode" in detail) from exc


class WeComChat(LinkedChat[Any]):
    """One chat (a user id or a group chat id); `frame` is the message being answered, if any."""

    def __init__(self, link: Link[Any], chat_id: str, frame: dict[str, Any] | None = None) -> None:
        super().__init__(link, chat_id)
        self._frame = frame
        self._received = time.monotonic()

    async def post(self, text: str, *, markdown: bool = True) -> str:
        if self._can_reply():
            stream_id = uuid.uuid4().hex
            await self._stream(stream_id, text, finish=markdown)
            return f"{STREAM}{stream_id}"
        if not markdown:
            raise SendError("WeCom streams only in reply to a message", permanent=True)
        body = {"msgtype": "markdown", "markdown": {"content": text}}
        ack = await _call(self._link.require().send_message(self.chat_id, body))
        return str((ack or {}).get("headers", {}).get("req_id") or uuid.uuid4().hex)

    async def edit(self, message_id: str, text: str, *, markdown: bool = True) -> None:
        if not message_id.startswith(STREAM) or not self._can_reply():
            raise SendError("this WeCom message cannot be changed any more", permanent=True)
        await self._stream(message_id.removeprefix(STREAM), text, finish=markdown)

    async def send_file(self, path: Path) -> str:
        raise SendError(
            f"WeCom's AI bot cannot send files ({path.name}); share a link instead",
            permanent=True,
        )

    def _can_reply(self) -> bool:
        return self._frame is not None and time.monotonic() - self._received < REPLY_WINDOW

    async def _stream(self, stream_id: str, text: str, *, finish: bool) -> None:
        client = self._link.require()
        await _call(client.reply_stream(self._frame, stream_id, text, finish=finish))
