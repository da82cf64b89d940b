"""A fake QQ client (what NapCat does) that connects to CountBot's OneBot v11 reverse WebSocket.

It connects with the access token and OneBot's headers, sends the lifecycle event and message
events as NapCat does (segment arrays, or CQ-code strings), answers every action CountBot calls
(`send_private_msg`, `send_group_msg`, `upload_private_file`, `upload_group_file`) with its
`echo`, keeps each chat's messages as a QQ user reads them, and serves the pictures users
send over loopback HTTP as QQ's picture server does. It can disconnect and reconnect (an outage)
and refuse actions.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.channels.loopback import wait_until

TOKEN = "onebot-access-token-for-tests"
BOT_QQ = 3889000001


@dataclass(slots=True)
class Action:
    action: str
    params: dict[str, Any]
    answered: bool = True


@dataclass(slots=True)
class Upload:
    chat: str
    name: str
    data: bytes


@dataclass
class FakeQQClient:
    token: str = TOKEN
    self_id: int = BOT_QQ
    actions: list[Action] = field(default_factory=list)
    uploads: list[Upload] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._socket: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._message_ids = itertools.count(7001)
        self._messages: dict[str, list[tuple[int, str]]] = {}
        self._pictures: dict[str, bytes] = {}
        self.files_served = 0  # downloads of what users sent
        self._picture_server: asyncio.Server | None = None
        self._refusals: dict[str, int] = {}
        self._silent = False
        # An event to send right behind the answer to the next send, given the sent message's id.
        self.after_next_send: Callable[[int], dict[str, Any]] | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        self._picture_server = await asyncio.start_server(self._serve_picture, "127.0.0.1", 0)

    async def stop(self) -> None:
        await self.disconnect()
        if self._picture_server is not None:
            self._picture_server.close()
            await self._picture_server.wait_closed()

    async def connect(
        self,
        endpoint: str,
        *,
        token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Connect as NapCat's reverse WebSocket client does; raises if CountBot refuses."""
        sent = {
            "Authorization": f"Bearer {self.token if token is None else token}",
            "X-Self-ID": str(self.self_id),
            "X-Client-Role": "Universal",
            "User-Agent": "OneBot/11",
            **(headers or {}),
        }
        self._socket = await connect(endpoint, additional_headers=sent)
        self._reader = asyncio.create_task(self._read(self._socket))
        await self._event(
            {"post_type": "meta_event", "meta_event_type": "lifecycle", "sub_type": "connect"}
        )

    async def disconnect(self) -> None:
        """The client goes away (its network dropped, or it restarts)."""
        reader, self._reader = self._reader, None
        socket, self._socket = self._socket, None
        if reader is not None:
            reader.cancel()
            # A daemon that died first has already closed (or dropped) the connection.
            with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                await reader
        if socket is not None:
            await socket.close()

    @property
    def connected(self) -> bool:
        return self._socket is not None

    # --- what users do ------------------------------------------------------------------------

    async def user_says(self, text: str, **event: Any) -> dict[str, Any]:
        """A user writes to the bot (`event`: `message_event`'s options); returns the event (send
        it again to repeat it)."""
        sent = self.message_event(text, **event)
        await self._event(sent)
        return sent

    def message_event(
        self,
        text: str,
        *,
        user: int,
        group: int | None = None,
        mention: bool = False,
        reply_to: int | None = None,
        picture: bytes | None = None,
        record: bytes | None = None,
        as_cq_string: bool = False,
        nickname: str = "Alice",
        message_id: int | None = None,
    ) -> dict[str, Any]:
        """The event of a user's message, as NapCat posts it (`user_says` sends it)."""
        message: list[dict[str, Any]] = []
        if reply_to is not None:
            message.append({"type": "reply", "data": {"id": str(reply_to)}})
        if mention:
            message.append({"type": "at", "data": {"qq": str(self.self_id)}})
        if text:
            message.append({"type": "text", "data": {"text": (" " if mention else "") + text}})
        if picture is not None:
            name = f"pic{len(self._pictures)}.jpg"
            self._pictures[name] = picture
            url = f"http://127.0.0.1:{self._picture_port}/download/{name}"
            message.append({"type": "image", "data": {"file": name, "url": url}})
        if record is not None:  # a voice note: NapCat offers it as a SILK file by URL
            name = f"rec{len(self._pictures)}.silk"
            self._pictures[name] = record
            url = f"http://127.0.0.1:{self._picture_port}/download/{name}"
            message.append({"type": "record", "data": {"file": name, "url": url}})
        event: dict[str, Any] = {
            "time": int(time.time()),
            "self_id": self.self_id,
            "post_type": "message",
            "message_type": "group" if group is not None else "private",
            "sub_type": "normal" if group is not None else "friend",
            "message_id": message_id if message_id is not None else next(self._message_ids),
            "user_id": user,
            "message": _as_cq(message) if as_cq_string else message,
            "raw_message": _as_cq(message),
            "font": 0,
            "sender": {"user_id": user, "nickname": nickname, "card": ""},
        }
        if group is not None:
            event["group_id"] = group
        return event

    async def resend(self, event: dict[str, Any]) -> None:
        await self._event(event)

    def refuse(self, action: str, times: int = 1) -> None:
        """The next `times` calls of `action` fail as NapCat fails them (status failed)."""
        self._refusals[action] = times

    # --- what tests read ----------------------------------------------------------------------

    def chat_messages(self, chat: str) -> list[str]:
        """The bot's messages in a chat (`private:<qq>`, `group:<n>`), oldest first."""
        return [text for _, text in self._messages.get(chat, [])]

    def bot_message_ids(self, chat: str) -> list[int]:
        return [message_id for message_id, _ in self._messages.get(chat, [])]

    def calls_to(self, action: str) -> list[Action]:
        return [a for a in self.actions if a.action == action]

    async def wait_until(self, check: Callable[[], bool], what: str = "condition") -> None:
        await wait_until(check, what, lambda: [a.action for a in self.actions[-20:]])

    async def wait_for_messages(self, chat: str, count: int = 1) -> list[str]:
        await self.wait_until(
            lambda: len(self.chat_messages(chat)) >= count, f"{count} message(s) in {chat}"
        )
        return self.chat_messages(chat)

    # --- the OneBot side ----------------------------------------------------------------------

    @property
    def _picture_port(self) -> int:
        assert self._picture_server is not None
        return int(self._picture_server.sockets[0].getsockname()[1])

    async def _event(self, event: dict[str, Any]) -> None:
        if self._socket is None:
            raise AssertionError("the fake QQ client is not connected")
        await self._socket.send(json.dumps(event))

    async def _read(self, socket: ClientConnection) -> None:
        async for raw in socket:
            frame = json.loads(raw)
            reply, shown = self._act(frame["action"], frame.get("params", {}))
            await socket.send(json.dumps({**reply, "echo": frame.get("echo")}))
            # As in QQ, a message is in the chat (and can be replied to) once the client has
            # answered the send, not while the answer is still on its way.
            if shown is not None:
                chat, message_id, text = shown
                self._messages.setdefault(chat, []).append((message_id, text))
                follow, self.after_next_send = self.after_next_send, None
                if follow is not None:  # on the wire right behind the answer
                    await socket.send(json.dumps(follow(message_id)))

    def _act(
        self, action: str, params: dict[str, Any]
    ) -> tuple[dict[str, Any], tuple[str, int, str] | None]:
        """The answer to one action, and the message it puts in a chat (if it sends one)."""
        self.actions.append(Action(action, params))
        if self._refusals.get(action, 0) > 0:
            self._refusals[action] -= 1
            refused = {
                "status": "failed",
                "retcode": 200,
                "data": None,
                "message": "risk control",
                "wording": "消息发送失败",
            }
            return refused, None
        chat = (
            f"group:{params['group_id']}"
            if "group_id" in params
            else f"private:{params.get('user_id')}"
        )
        if action in ("send_private_msg", "send_group_msg"):
            message_id = next(self._message_ids)
            sent = {"status": "ok", "retcode": 0, "data": {"message_id": message_id}}
            return sent, (chat, message_id, _readable(params["message"]))
        if action in ("upload_private_file", "upload_group_file"):
            payload = str(params["file"]).removeprefix("base64://")
            self.uploads.append(Upload(chat, params["name"], base64.b64decode(payload)))
            return {"status": "ok", "retcode": 0, "data": {"file_id": f"/{params['name']}"}}, None
        return {
            "status": "failed",
            "retcode": 1404,
            "data": None,
            "message": "unknown action",
        }, None

    async def _serve_picture(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        request = await reader.readuntil(b"\r\n\r\n")
        name = request.split(b" ")[1].decode().rsplit("/", 1)[-1]
        body = self._pictures.get(name)
        self.files_served += 1
        status = b"200 OK" if body is not None else b"404 Not Found"
        body = body or b""
        writer.write(
            b"HTTP/1.1 "
            + status
            + b"\r\nContent-Type: image/jpeg\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\nConnection: close\r\n\r\n"
            + body
        )
        await writer.drain()
        writer.close()


def _readable(message: list[dict[str, Any]]) -> str:
    """A sent message as the QQ user sees it: text, and [image] for a picture."""
    shown = []
    for segment in message:
        if segment["type"] == "text":
            shown.append(segment["data"]["text"])
        else:
            shown.append(f"[{segment['type']}]")
    return "".join(shown)


def _as_cq(message: list[dict[str, Any]]) -> str:
    """Segments as a CQ-code string (NapCat with `messagePostFormat: string`)."""

    def escape(text: str) -> str:
        return text.replace("&", "&amp;").replace("[", "&#91;").replace("]", "&#93;")

    out = []
    for segment in message:
        if segment["type"] == "text":
            out.append(escape(segment["data"]["text"]))
        else:
            args = "".join(
                f",{k}={escape(str(v)).replace(',', '&#44;')}" for k, v in segment["data"].items()
            )
            out.append(f"[CQ:{segment['type']}{args}]")
    return "".join(out)
