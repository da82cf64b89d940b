"""A fake WeCom AI bot long connection on 127.0.0.1, over TLS as the SDK insists (`wss://`).

The certificate comes from a throwaway CA made for the test (`trustme`); `trust_fake_wecom`
adds that CA to the SDK's TLS contexts. It speaks the AI bot protocol: `aibot_subscribe`
(checks the bot id and secret), `ping`, message callbacks (`aibot_msg_callback`), stream replies
(`aibot_respond_msg` with `msgtype: stream`, the same stream id replaced until `finish`) and
proactive messages (`aibot_send_msg`), each acknowledged with `errcode`. Pictures are served
over HTTPS, AES-256-CBC encrypted with the message's `aeskey` as WeCom does. An outage closes
the socket and refuses new ones; callbacks pushed meanwhile go out after the reconnect.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trustme
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from tests.channels.loopback import LoopbackServer, wait_until

BOT_ID = "aibFakeBotIdForTests"
SECRET = "fake-wecom-bot-secret"


def trust_fake_wecom(ca: trustme.CA) -> None:
    """Let the SDK trust the test's CA (it builds its TLS contexts once, at import)."""
    import aibot.api
    import aibot.ws

    ca.configure_trust(aibot.ws._SSL_CONTEXT)
    ca.configure_trust(aibot.api._SSL_CONTEXT)


@dataclass(slots=True)
class BotMessage:
    chat: str
    key: str
    content: str
    finished: bool
    updates: int = 0


@dataclass
class FakeWeCom:
    ca: trustme.CA
    messages: list[BotMessage] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self._pending: list[dict[str, Any]] = []
        self._files: dict[str, bytes] = {}
        self.files_served = 0  # downloads of the pictures users sent
        self._chat_of_request: dict[str, str] = {}
        self._socket: WebSocket | None = None
        self._wake = asyncio.Event()
        self._down = False
        self._refusals: dict[str, int] = {}
        self._http = LoopbackServer()
        self._certs = tempfile.TemporaryDirectory()

    @property
    def ws_url(self) -> str:
        return f"wss://127.0.0.1:{self._http.port}/"

    async def start(self) -> None:
        folder = Path(self._certs.name)
        cert = self.ca.issue_cert("127.0.0.1", "localhost")
        cert.private_key_pem.write_to_path(folder / "key.pem")
        cert.cert_chain_pems[0].write_to_path(folder / "cert.pem")
        await self._http.serve(
            [
                Route("/files/{name}", self._file, methods=["GET"]),
                WebSocketRoute("/", self._long_connection),
            ],
            ssl_certfile=os.fspath(folder / "cert.pem"),
            ssl_keyfile=os.fspath(folder / "key.pem"),
        )

    async def stop(self) -> None:
        await self.outage()
        self._wake.set()
        await self._http.shutdown()
        self._certs.cleanup()

    # --- what users and tests do --------------------------------------------------------------

    def user_says(
        self,
        text: str,
        *,
        user: str,
        group: str | None = None,
        mention: bool = False,
        picture: bytes | None = None,
        voice: bool = False,
    ) -> dict[str, Any]:
        """A message callback for the bot; returns it (push it again with `push`). With `voice`,
        `text` arrives as WeCom sends a voice note: already transcribed, no audio."""
        body: dict[str, Any] = {
            "msgid": f"msg{next(self._ids)}",
            "aibotid": BOT_ID,
            "chattype": "group" if group else "single",
            "from": {"userid": user},
            "response_url": "https://example.invalid/unused",
        }
        if group:
            body["chatid"] = group
        if mention:
            text = f"@CountBot {text}"
        if picture is not None:
            body["msgtype"] = "mixed"
            body["mixed"] = {
                "msg_item": [
                    {"msgtype": "text", "text": {"content": text}},
                    {"msgtype": "image", "image": self._encrypted(picture)},
                ]
            }
        elif voice:
            body["msgtype"] = "voice"
            body["voice"] = {"content": text}
        else:
            body["msgtype"] = "text"
            body["text"] = {"content": text}
        frame = {
            "cmd": "aibot_msg_callback",
            "headers": {"req_id": f"callback_{next(self._ids)}"},
            "body": body,
        }
        self._chat_of_request[frame["headers"]["req_id"]] = group or user
        self.push(frame)
        return frame

    def push(self, frame: dict[str, Any]) -> None:
        self._pending.append(frame)
        self._wake.set()

    async def outage(self) -> None:
        self._down = True
        if self._socket is not None:
            with contextlib.suppress(Exception):
                await self._socket.close()

    def recover(self) -> None:
        self._down = False

    @property
    def connected(self) -> bool:
        return self._socket is not None

    def refuse(self, cmd: str, times: int = 1) -> None:
        self._refusals[cmd] = times

    def chat_messages(self, chat: str) -> list[str]:
        return [m.content for m in self.messages if m.chat == chat]

    def chat(self, chat: str) -> list[BotMessage]:
        return [m for m in self.messages if m.chat == chat]

    async def wait_until(self, check: Callable[[], bool], what: str = "condition") -> None:
        await wait_until(check, what, lambda: self.calls[-20:])

    async def wait_for_messages(self, chat: str, count: int = 1) -> list[str]:
        """Wait for `count` messages in the chat, every stream finished."""
        await self.wait_until(
            lambda: len(self.chat(chat)) >= count and all(m.finished for m in self.chat(chat)),
            f"{count} finished message(s) in {chat}",
        )
        return self.chat_messages(chat)

    # --- the platform -------------------------------------------------------------------------

    def _encrypted(self, data: bytes) -> dict[str, str]:
        key = os.urandom(32)
        padder = padding.PKCS7(256).padder()
        plain = padder.update(data) + padder.finalize()
        encryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
        name = f"pic{next(self._ids)}"
        self._files[name] = encryptor.update(plain) + encryptor.finalize()
        url = f"https://127.0.0.1:{self._http.port}/files/{name}"
        return {"url": url, "aeskey": base64.b64encode(key).decode().rstrip("=")}

    async def _file(self, request: Request) -> Response:
        self.files_served += 1
        return Response(self._files[request.path_params["name"]])

    async def _long_connection(self, websocket: WebSocket) -> None:
        if self._down:
            await websocket.close()
            return
        await websocket.accept()
        reader = asyncio.create_task(self._read(websocket))
        sent: set[int] = set()
        try:
            while not reader.done():
                if self._socket is websocket:
                    for frame in list(self._pending):
                        if id(frame) not in sent:
                            sent.add(id(frame))
                            self._pending.remove(frame)
                            await websocket.send_text(json.dumps(frame))
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), 0.1)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            reader.cancel()
            if self._socket is websocket:
                self._socket = None

    async def _read(self, websocket: WebSocket) -> None:
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):
            while True:
                frame = json.loads(await websocket.receive_text())
                reply = self._act(frame, websocket)
                await websocket.send_text(json.dumps(reply))

    def _act(self, frame: dict[str, Any], websocket: WebSocket) -> dict[str, Any]:
        cmd, req_id = frame.get("cmd"), frame["headers"]["req_id"]
        body = frame.get("body") or {}
        self.calls.append(str(cmd))
        ok = {"headers": {"req_id": req_id}, "errcode": 0, "errmsg": "ok"}
        if self._refusals.get(str(cmd), 0) > 0:
            self._refusals[str(cmd)] -= 1
            return {**ok, "errcode": 600039, "errmsg": "chat not found"}
        if cmd == "aibot_subscribe":
            if body.get("bot_id") != BOT_ID or body.get("secret") != SECRET:
                return {**ok, "errcode": 40058, "errmsg": "invalid bot secret"}
            self._socket = websocket
            self._wake.set()
            return ok
        if cmd == "aibot_respond_msg" and body.get("msgtype") == "stream":
            stream = body["stream"]
            existing = next((m for m in self.messages if m.key == stream["id"]), None)
            if existing is not None and existing.finished:
                return {**ok, "errcode": 846604, "errmsg": "stream already finished"}
            if existing is None:
                chat = self._chat_of_request[req_id]
                existing = BotMessage(chat, stream["id"], "", False)
                self.messages.append(existing)
            else:
                existing.updates += 1
            existing.content, existing.finished = stream["content"], bool(stream["finish"])
            return ok
        if cmd == "aibot_send_msg":
            content = body["markdown"]["content"]
            self.messages.append(BotMessage(body["chatid"], req_id, content, True))
            return ok
        return ok  # ping
