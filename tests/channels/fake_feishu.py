"""A fake Feishu open platform on 127.0.0.1 that lark-oapi really talks to (`domain=` its URL).

HTTP: the tenant token, bot info, the long connection's endpoint discovery, sending messages,
updating cards (PATCH), uploading images and files, downloading what users sent. WebSocket: the
long connection, speaking lark-oapi's protobuf frames: events go out as DATA frames and the
client's acknowledgement comes back on the same frame. An outage closes the socket and answers
endpoint discovery with "system busy" until it ends; events pushed meanwhile wait, and events
never acknowledged are pushed again after a reconnect, as Feishu does.
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
from email.parser import BytesParser
from typing import Any

from lark_oapi.ws.pb.pbbp2_pb2 import Frame
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from countbot.channels.feishu.cards import card_text
from tests.channels.loopback import LoopbackServer, wait_until

APP_ID = "cli_fake_app_for_tests"
APP_SECRET = "fake-app-secret-for-tests"
BOT_OPEN_ID = "ou_countbot_bot"


@dataclass(slots=True)
class SentMessage:
    chat_id: str
    message_id: str
    msg_type: str
    content: dict[str, Any]
    updates: int = 0

    @property
    def text(self) -> str:
        if self.msg_type == "interactive":
            return card_text(self.content)
        return f"[{self.msg_type}]"


@dataclass
class FakeFeishu:
    sent: list[SentMessage] = field(default_factory=list)
    uploads: list[tuple[str, bytes]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self._resources: dict[str, bytes] = {}
        self._pending: list[tuple[str, bytes]] = []  # (frame message id, event) not acked yet
        self.acked: list[str] = []
        self._socket: WebSocket | None = None
        self._wake = asyncio.Event()
        self._down = False
        self._http = LoopbackServer()
        self._refusals: dict[str, int] = {}

    @property
    def domain(self) -> str:
        return f"http://127.0.0.1:{self._http.port}"

    async def start(self) -> None:
        await self._http.serve(
            [
                Route(
                    "/open-apis/auth/v3/tenant_access_token/internal", self._token, methods=["POST"]
                ),
                Route("/open-apis/bot/v3/info", self._bot_info, methods=["GET"]),
                Route("/callback/ws/endpoint", self._endpoint, methods=["POST"]),
                Route("/open-apis/im/v1/messages", self._send, methods=["POST"]),
                Route("/open-apis/im/v1/messages/{message_id}", self._patch, methods=["PATCH"]),
                Route(
                    "/open-apis/im/v1/messages/{message_id}/resources/{key}",
                    self._resource,
                    methods=["GET"],
                ),
                Route("/open-apis/im/v1/images", self._upload, methods=["POST"]),
                Route("/open-apis/im/v1/files", self._upload, methods=["POST"]),
                WebSocketRoute("/ws", self._long_connection),
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
        user: str,
        chat_id: str | None = None,
        group: bool = False,
        mention: bool = False,
        reply_to: str | None = None,
        picture: bytes | None = None,
        voice: bytes | None = None,
    ) -> dict[str, Any]:
        """Push a message event to the bot; returns it (push it again with `push`)."""
        message_id = f"om_user_{next(self._ids)}"
        mentions = []
        if mention:
            text = f"@_user_1 {text}"
            mentions.append({"key": "@_user_1", "id": {"open_id": BOT_OPEN_ID}, "name": "CountBot"})
        if picture is not None:
            key = f"img_{next(self._ids)}"
            self._resources[key] = picture
            content = {
                "title": "",
                "content": [[{"tag": "text", "text": text}], [{"tag": "img", "image_key": key}]],
            }
            kind = "post"
        elif voice is not None:  # an `audio` message: its file is fetched as a resource
            key = f"file_{next(self._ids)}"
            self._resources[key] = voice
            content, kind = {"file_key": key, "duration": 2000}, "audio"
        else:
            content, kind = {"text": text}, "text"
        event = {
            "schema": "2.0",
            "header": {
                "event_id": uuid.uuid4().hex,
                "event_type": "im.message.receive_v1",
                "create_time": str(int(time.time() * 1000)),
                "token": "",
                "app_id": APP_ID,
                "tenant_key": "tenant",
            },
            "event": {
                "sender": {"sender_id": {"open_id": user}, "sender_type": "user"},
                "message": {
                    "message_id": message_id,
                    "parent_id": reply_to or "",
                    "chat_id": chat_id or f"oc_p2p_{user}",
                    "chat_type": "group" if group else "p2p",
                    "message_type": kind,
                    "content": json.dumps(content),
                    "mentions": mentions,
                },
            },
        }
        self.push(event)
        return event

    def push(self, event: dict[str, Any]) -> None:
        self._pending.append((uuid.uuid4().hex, json.dumps(event).encode()))
        self._wake.set()

    async def outage(self) -> None:
        """Feishu goes away: the socket closes, reconnecting fails until `recover`."""
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
        """The next `times` sends (`send`) or card updates (`patch`) fail with a Feishu error."""
        self._refusals[what] = times

    def chat_messages(self, chat_id: str) -> list[str]:
        return [m.text for m in self.sent if m.chat_id == chat_id]

    def messages(self, chat_id: str) -> list[SentMessage]:
        return [m for m in self.sent if m.chat_id == chat_id]

    async def wait_until(self, check: Callable[[], bool], what: str = "condition") -> None:
        await wait_until(check, what, lambda: self.calls[-20:])

    async def wait_for_messages(self, chat_id: str, count: int = 1) -> list[str]:
        """Wait for `count` finished messages (no card still streaming, marked " …")."""
        await self.wait_until(
            lambda: (
                len(self.chat_messages(chat_id)) >= count
                and not any(t.endswith(" …") for t in self.chat_messages(chat_id))
            ),
            f"{count} finished message(s) in {chat_id}",
        )
        return self.chat_messages(chat_id)

    # --- HTTP ---------------------------------------------------------------------------------

    async def _token(self, request: Request) -> Response:
        body = await request.json()
        self.calls.append("tenant_access_token")
        if body.get("app_secret") != APP_SECRET:
            return JSONResponse({"code": 10014, "msg": "app secret invalid"})
        return JSONResponse(
            {"code": 0, "msg": "ok", "tenant_access_token": "t-fake", "expire": 7200}
        )

    async def _bot_info(self, request: Request) -> Response:
        self.calls.append("bot_info")
        return JSONResponse(
            {"code": 0, "msg": "ok", "bot": {"open_id": BOT_OPEN_ID, "app_name": "CountBot"}}
        )

    async def _endpoint(self, request: Request) -> Response:
        self.calls.append("endpoint")
        if self._down:
            return JSONResponse({"code": 1, "msg": "system busy"})
        config = {
            "ReconnectCount": -1,
            "ReconnectInterval": 1,
            "ReconnectNonce": 0,
            "PingInterval": 120,
        }
        url = f"ws://127.0.0.1:{self._http.port}/ws?device_id=dev1&service_id=7"
        return JSONResponse({"code": 0, "msg": "ok", "data": {"URL": url, "ClientConfig": config}})

    def _refused(self, what: str) -> Response | None:
        if self._refusals.get(what, 0) <= 0:
            return None
        self._refusals[what] -= 1
        return JSONResponse({"code": 230002, "msg": "Bot/User can NOT be out of the chat."}, 400)

    async def _send(self, request: Request) -> Response:
        self.calls.append("send")
        if (refused := self._refused("send")) is not None:
            return refused
        assert request.query_params.get("receive_id_type") == "chat_id"
        body = await request.json()
        message = SentMessage(
            body["receive_id"],
            f"om_bot_{next(self._ids)}",
            body["msg_type"],
            json.loads(body["content"]),
        )
        self.sent.append(message)
        return JSONResponse({"code": 0, "msg": "ok", "data": {"message_id": message.message_id}})

    async def _patch(self, request: Request) -> Response:
        self.calls.append("patch")
        if (refused := self._refused("patch")) is not None:
            return refused
        body = await request.json()
        message = next(m for m in self.sent if m.message_id == request.path_params["message_id"])
        message.content = json.loads(body["content"])
        message.updates += 1
        return JSONResponse({"code": 0, "msg": "ok", "data": {}})

    async def _resource(self, request: Request) -> Response:
        self.calls.append("resource")
        data = self._resources.get(request.path_params["key"])
        if data is None:
            return JSONResponse({"code": 234003, "msg": "file not found"}, 404)
        return Response(data, media_type="application/octet-stream")

    async def _upload(self, request: Request) -> Response:
        # lark-oapi sends the file as a form field without a filename, which Starlette's form
        # parser would decode as text: parse the multipart body as bytes.
        head = f"Content-Type: {request.headers['content-type']}\r\n\r\n".encode()
        parts = BytesParser().parsebytes(head + await request.body()).get_payload()
        form = {
            p.get_param("name", header="content-disposition"): p.get_payload(decode=True)
            for p in parts
        }
        data = form.get("image") or form.get("file")
        assert data is not None
        name = form["file_name"].decode() if "file_name" in form else "image"
        self.uploads.append((name, data))
        self.calls.append("upload")
        key = f"{'img' if 'image' in form else 'file'}_up_{next(self._ids)}"
        return JSONResponse({"code": 0, "msg": "ok", "data": {"image_key": key, "file_key": key}})

    # --- the long connection ------------------------------------------------------------------

    async def _long_connection(self, websocket: WebSocket) -> None:
        await websocket.accept()
        self._socket = websocket
        reader = asyncio.create_task(self._read_acks(websocket))
        sent: set[str] = set()
        try:
            while not reader.done():
                for frame_id, payload in list(self._pending):
                    if frame_id not in sent:
                        sent.add(frame_id)
                        await websocket.send_bytes(_data_frame(frame_id, payload))
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
                frame = Frame()
                frame.ParseFromString(await websocket.receive_bytes())
                headers = {h.key: h.value for h in frame.headers}
                if frame.method == 1 and json.loads(frame.payload).get("code") == 200:
                    acked = headers["message_id"]
                    self.acked.append(acked)
                    self._pending = [p for p in self._pending if p[0] != acked]


def _data_frame(frame_id: str, payload: bytes) -> bytes:
    frame = Frame()
    for key, value in (
        ("type", "event"),
        ("message_id", frame_id),
        ("sum", "1"),
        ("seq", "0"),
        ("trace_id", uuid.uuid4().hex),
    ):
        header = frame.headers.add()
        header.key, header.value = key, value
    frame.service, frame.method, frame.SeqID, frame.LogID = 7, 1, 0, 0
    frame.payload = payload
    return frame.SerializeToString()
