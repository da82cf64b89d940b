"""One OneBot v11 connection: API calls matched to their answers by `echo`, events handed on.

The QQ client (NapCat, LLOneBot) holds the connection open to CountBot and sends events on it;
CountBot sends actions (`send_private_msg`, ...) on the same socket and the client answers each
with the action's `echo`. A call fails with a `SendError` when the client refuses it (permanent:
it already tried) or the connection is gone or silent (transient: try again after reconnecting).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Callable
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from countbot.channels.door import SendError

log = logging.getLogger(__name__)

CALL_TIMEOUT = 30.0
NOT_CONNECTED = "the QQ client is not connected right now"


class OneBotConnection:
    """A connected QQ client; `received` is fed every frame the client sends."""

    def __init__(self, socket: ServerConnection, self_id: str | None) -> None:
        self._socket = socket
        self.self_id = self_id
        self._echoes = itertools.count(1)
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._on_answer: dict[str, Callable[[Any], None]] = {}

    async def call(
        self,
        action: str,
        params: dict[str, Any],
        on_answer: Callable[[Any], None] | None = None,
    ) -> Any:
        """Run one action on the client; returns its `data`.

        `on_answer(data)` runs as the answer frame is read, before any frame after it: an event
        replying to a message just sent must find that message already known as the bot's,
        which the caller resuming later cannot promise.
        """
        echo = f"countbot-{next(self._echoes)}"
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[echo] = answer
        if on_answer is not None:
            self._on_answer[echo] = on_answer
        try:
            frame = json.dumps({"action": action, "params": params, "echo": echo})
            await self._socket.send(frame)
            return await asyncio.wait_for(answer, CALL_TIMEOUT)
        except ConnectionClosed as exc:
            raise SendError(NOT_CONNECTED) from exc
        except TimeoutError as exc:
            raise SendError(f"the QQ client did not answer {action} in time") from exc
        finally:
            self._pending.pop(echo, None)
            self._on_answer.pop(echo, None)

    def received(self, frame: dict[str, Any]) -> bool:
        """Settle the call this frame answers; False when it is an event instead."""
        echo = frame.get("echo")
        if "post_type" in frame or not isinstance(echo, str):
            return False
        answer = self._pending.get(echo)
        if answer is not None and not answer.done():
            if frame.get("status") == "ok" or frame.get("retcode") == 0:
                answer.set_result(frame.get("data"))
                on_answer = self._on_answer.pop(echo, None)
                if on_answer is not None:
                    on_answer(frame.get("data"))
            else:
                why = frame.get("wording") or frame.get("message") or frame.get("retcode")
                answer.set_exception(SendError(f"QQ refused: {why}", permanent=True))
        return True

    def closed(self) -> None:
        """The socket is gone: every call still waiting fails (transiently) at once."""
        for answer in self._pending.values():
            if not answer.done():
                answer.set_exception(SendError(NOT_CONNECTED))

    async def close(self) -> None:
        await self._socket.close(1000, "replaced by a new connection")
