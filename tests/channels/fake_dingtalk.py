"""A fake DingTalk open platform on 127.0.0.1 that dingtalk-stream and the channel really use.

HTTP: access tokens, opening a Stream connection (the WebSocket URL and ticket), robot messages
to a person (`oToMessages/batchSend`) or a group (`groupMessages/send`), media uploads (the older
`/media/upload`), and downloads of what users sent. WebSocket: Stream mode's JSON frames, robot
messages as CALLBACK frames on `/v1.0/im/bot/messages/get`, acknowledged by the client with the
frame's `messageId`. An outage closes the socket and refuses new ones until it ends; frames never
acknowledged are sent again after a reconnect, as DingTalk does.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from tests.channels.loopback import LoopbackServer, wait_until

APP_KEY = "dingfaketestappkey"
APP_SECRET = "fake-dingtalk-secret"
ROBOT = "dingrobotuserid"


@dataclass(slots=True)
class RobotMessage:
    chat: str
    key: str
    params: dict[str, Any]

    @property
    def text(self) -> str:
        if self.key == "sampleMarkdown":
            return str(self.params["text"])
        if self.key == "sampleText":
            return str(self.params["content"])
        return f"[{self.key}]"


@dataclass
class FakeDingTalk:
    sent: list[RobotMessage] = field(default_factory=list)
    uploads: list[tuple[str, str, bytes]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self._files: dict[str, bytes] = {}
        self._pending: list[tuple[str, dict[str, Any]]] = []
        self._socket: WebSocket | None = None
        self._wake = asyncio.Event()
        self._down = False
        self._refusals: dict[str, int] = {}
        self._http = LoopbackServer()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._http.port}"

    async def start(self) -> None:
        await self._http.serve(
            [
                Route("/v1.0/oauth2/accessToken", self._token, methods=["POST"]),
                Route("/v1.0/gateway/connections/open", self._open, methods=["POST"]),
                Route("/v1.0/robot/oToMessages/batchSend", self._send, methods=["POST"]),
                Route("/v1.0/robot/groupMessages/send", self._send, methods=["POST"]),
                Route("/v1.0/robot/messageFiles/download", self._download, methods=["POST"]),
                Route("/files/{code}", self._file, methods=["GET"]),
                Route("/media/upload", self._upload, methods=["POST"]),
                WebSocketRoute("/connect", self._stream),
            ],
        )

    async def stop(self) -> None:
        self._wake.set()
        await self._http.shutdown()

    # --- what users and tests do --------------------------------------------------------------

    def user_says(
        self,
        text: str,
        *,
        staff_id: str,
        group: str | None = None,
        mention: bool = False,
        picture: bytes | None = None,
        nick: str = "Alice",
    ) -> dict[str, Any]:
        """A robot message arrives (as a CALLBACK frame); returns the frame to send it again."""
        data: dict[str, Any] = {
            "conversationId": group or f"cid_p2p_{staff_id}",
            "chatbotCorpId": "dingcorp",
            "chatbotUserId": ROBOT,
            "msgId": f"msg{next(self._ids)}",
            "senderNick": nick,
            "isAdmin": False,
            "senderStaffId": staff_id,
            "sessionWebhookExpiredTime": int(time.time() * 1000) + 3_600_000,
            "createAt": int(time.time() * 1000),
            "senderCorpId": "dingcorp",
            "conversationType": "2" if group else "1",
            "senderId": f"$:LWCP_v1:${staff_id}",
            "sessionWebhook": f"{self.endpoint}/robot/sendBySession",
            "robotCode": APP_KEY,
            "isInAtList": mention if group else True,
        }
        if picture is not None:
            code = f"dl{next(self._ids)}"
            self._files[code] = picture
            data["msgtype"] = "richText"
            data["content"] = {
                "richText": [{"text": text}, {"downloadCode": code, "type": "picture"}]
            }
        else:
            data["msgtype"] = "text"
            data["text"] = {"content": (" " if mention else "") + text}
        frame = {
            "specVersion": "1.0",
            "type": "CALLBACK",
            "headers": {
                "appId": "app",
                "connectionId": "conn",
                "contentType": "application/json",
                "messageId": uuid.uuid4().hex,
                "time": str(int(time.time() * 1000)),
                "topic": "/v1.0/im/bot/messages/get",
            },
            "data": json.dumps(data),
        }
        self.push(frame)
        return frame

    def push(self, frame: dict[str, Any]) -> None:
        self._pending.append((frame["headers"]["messageId"], frame))
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

    def refuse(self, what: str, times: int = 1) -> None:
        self._refusals[what] = times

    def chat_messages(self, chat: str) -> list[str]:
        return [m.text for m in self.sent if m.chat == chat]

    async def wait_until(self, check: Callable[[], bool], what: str = "condition") -> None:
        await wait_until(check, what, lambda: self.calls[-20:])

    async def wait_for_messages(self, chat: str, count: int = 1) -> list[str]:
        await self.wait_until(
            lambda: len(self.chat_messages(chat)) >= count, f"{count} message(s) in {chat}"
        )
        return self.chat_messages(chat)

    # --- HTTP ---------------------------------------------------------------------------------

    async def _token(self, request: Request) -> Response:
        body = await request.json()
        self.calls.append("accessToken")
        if body.get("appSecret") != APP_SECRET:
            return JSONResponse({"code": "invalidClientSecret", "message": "wrong secret"}, 400)
        return JSONResponse({"accessToken": "fake-token", "expireIn": 7200})

    async def _open(self, request: Request) -> Response:
        body = await request.json()
        self.calls.append("open")
        assert body["clientId"] == APP_KEY and body["clientSecret"] == APP_SECRET
        url = f"ws://127.0.0.1:{self._http.port}/connect"
        return JSONResponse({"endpoint": url, "ticket": uuid.uuid4().hex})

    async def _send(self, request: Request) -> Response:
        assert request.headers.get("x-acs-dingtalk-access-token") == "fake-token"
        body = await request.json()
        self.calls.append("send")
        if self._refusals.get("send", 0) > 0:
            self._refusals["send"] -= 1
            return JSONResponse({"code": "resource.not.found", "message": "robot not in chat"}, 400)
        if "userIds" in body:
            (staff_id,) = body["userIds"]
            chat = f"private:{staff_id}"
        else:
            chat = f"group:{body['openConversationId']}"
        self.sent.append(RobotMessage(chat, body["msgKey"], json.loads(body["msgParam"])))
        return JSONResponse({"processQueryKey": f"pqk{next(self._ids)}"})

    async def _download(self, request: Request) -> Response:
        body = await request.json()
        self.calls.append("download")
        return JSONResponse({"downloadUrl": f"{self.endpoint}/files/{body['downloadCode']}"})

    async def _file(self, request: Request) -> Response:
        return Response(self._files[request.path_params["code"]])

    async def _upload(self, request: Request) -> Response:
        assert request.query_params.get("access_token") == "fake-token"
        form = await request.form()
        media = form["media"]
        assert not isinstance(media, str)
        self.uploads.append((request.query_params["type"], str(media.filename), await media.read()))
        return JSONResponse({"errcode": 0, "errmsg": "ok", "media_id": f"@media{next(self._ids)}"})

    # --- Stream mode --------------------------------------------------------------------------

    async def _stream(self, websocket: WebSocket) -> None:
        if self._down:
            await websocket.close()  # refused during the handshake: a 403
            return
        await websocket.accept()
        self._socket = websocket
        reader = asyncio.create_task(self._read_acks(websocket))
        sent: set[str] = set()
        try:
            while not reader.done():
                for message_id, frame in list(self._pending):
                    if message_id not in sent:
                        sent.add(message_id)
                        await websocket.send_text(json.dumps(frame))
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), 0.1)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            reader.cancel()
            self._socket = None

    async def _read_acks(self, websocket: WebSocket) -> None:
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):
            while True:
                ack = json.loads(await websocket.receive_text())
                if ack.get("code") == 200:
                    acked = ack["headers"]["messageId"]
                    self._pending = [p for p in self._pending if p[0] != acked]
