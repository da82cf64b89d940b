"""A fake Discord on 127.0.0.1 that discord.py really connects to: its REST API and gateway.

REST (`/api/v10`, `Authorization: Bot <token>`): `GET /users/@me`, messages created (JSON, or
multipart with files), edited and typed in, interaction callbacks; attachments users sent are
served from a CDN path. Gateway (JSON text frames, no compression): HELLO, heartbeats ACKed,
IDENTIFY answered with READY (session id, `resume_gateway_url`), RESUME answered by replaying
every dispatch after the client's sequence number and RESUMED, as Discord does. An outage
closes the socket (code 1001) and refuses new ones until it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from tests.channels.loopback import LoopbackServer, wait_for_finished, wait_until

TOKEN = "fake.discord.bot-token"
BOT_ID = 900000000000000001
GUILD = 700000000000000001


@dataclass(slots=True)
class Sent:
    """A message the bot created; `edits` holds every content it had, the first included."""

    channel: str
    id: str
    edits: list[str]
    components: list[dict[str, Any]]
    files: list[tuple[str, bytes]]

    @property
    def text(self) -> str:
        return self.edits[-1]


def _user(user_id: int, name: str, *, bot: bool = False) -> dict[str, Any]:
    return {
        "id": str(user_id),
        "username": name,
        "discriminator": "0",
        "global_name": name.title(),
        "avatar": None,
        "bot": bot,
    }


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class FakeDiscord:
    sent: list[Sent] = field(default_factory=list)
    callbacks: list[dict[str, Any]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    typing: list[str] = field(default_factory=list)
    identified: int = 0
    resumed: int = 0

    def __post_init__(self) -> None:
        self._ids = itertools.count(800000000000000001)
        self._files: dict[str, bytes] = {}
        self.files_served = 0  # downloads of what users sent
        self._log: list[tuple[int, dict[str, Any]]] = []
        self._seq = itertools.count(1)
        self._session = uuid.uuid4().hex
        self._socket: WebSocket | None = None
        self._wake = asyncio.Event()
        self._down = False
        self._refusals: dict[str, tuple[int, int]] = {}
        self._http = LoopbackServer()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self._http.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self._http.port}/gateway"

    async def start(self) -> None:
        await self._http.serve(
            [
                Route("/api/v10/users/@me", self._me, methods=["GET"]),
                Route("/api/v10/oauth2/applications/@me", self._application, methods=["GET"]),
                Route("/api/v10/channels/{channel}/messages", self._create, methods=["POST"]),
                Route(
                    "/api/v10/channels/{channel}/messages/{message}", self._edit, methods=["PATCH"]
                ),
                Route("/api/v10/channels/{channel}/typing", self._typing, methods=["POST"]),
                Route(
                    "/api/v10/interactions/{id}/{token}/callback", self._callback, methods=["POST"]
                ),
                Route("/cdn/{file}", self._cdn, methods=["GET"]),
                WebSocketRoute("/gateway", self._gateway),
            ]
        )

    async def stop(self) -> None:
        self._wake.set()
        await self._http.shutdown()

    # --- what users and tests do --------------------------------------------------------------

    def user_says(
        self,
        text: str,
        *,
        user: int,
        channel: int,
        guild: bool = False,
        mention: bool = False,
        picture: bytes | None = None,
        name: str = "alice",
    ) -> dict[str, Any]:
        """A MESSAGE_CREATE dispatch; returns its data, to deliver it again."""
        message_id = str(next(self._ids))
        data: dict[str, Any] = {
            "id": message_id,
            "channel_id": str(channel),
            "author": _user(user, name),
            "content": f"<@{BOT_ID}> {text}" if mention else text,
            "timestamp": _now(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [_user(BOT_ID, "countbot", bot=True)] if mention else [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "type": 0,
        }
        if guild:
            data["guild_id"] = str(GUILD)
            data["member"] = {"roles": [], "joined_at": _now(), "deaf": False, "mute": False}
        if picture is not None:
            file_id = str(next(self._ids))
            self._files[file_id] = picture
            url = f"http://127.0.0.1:{self._http.port}/cdn/{file_id}"
            data["attachments"] = [
                {
                    "id": file_id,
                    "filename": "photo.jpg",
                    "size": len(picture),
                    "url": url,
                    "proxy_url": url,
                    "content_type": "image/jpeg",
                }
            ]
        self.dispatch("MESSAGE_CREATE", data)
        return data

    def press(self, user: int, message: Sent, custom_id: str, name: str = "alice") -> None:
        """`user` presses a button on `message` (an INTERACTION_CREATE dispatch, in a DM)."""
        self.dispatch(
            "INTERACTION_CREATE",
            {
                "id": str(next(self._ids)),
                "application_id": str(BOT_ID),
                "type": 3,
                "token": uuid.uuid4().hex,
                "version": 1,
                "channel_id": message.channel,
                "channel": {
                    "id": message.channel,
                    "type": 1,
                    "recipients": [_user(user, name)],
                    "last_message_id": message.id,
                    "flags": 0,
                },
                "user": _user(user, name),
                "data": {"custom_id": custom_id, "component_type": 2},
                "message": self._message(message),
                "app_permissions": "0",
                "locale": "en-US",
                "entitlements": [],
                "authorizing_integration_owners": {},
                "context": 1,
                "attachment_size_limit": 10485760,
            },
        )

    def dispatch(self, event: str, data: dict[str, Any]) -> None:
        seq = next(self._seq)
        self._log.append((seq, {"op": 0, "t": event, "s": seq, "d": data}))
        self._wake.set()

    async def outage(self) -> None:
        self._down = True
        if self._socket is not None:
            with contextlib.suppress(Exception):
                await self._socket.close(code=1001)

    def recover(self) -> None:
        self._down = False

    @property
    def connected(self) -> bool:
        return self._socket is not None

    def refuse(self, channel: str, status: int, times: int = 1) -> None:
        self._refusals[channel] = (status, times)

    def chat_messages(self, channel: str) -> list[str]:
        return [s.text for s in self.sent if s.channel == channel]

    async def wait_until(self, check: Callable[[], bool], what: str = "condition") -> None:
        await wait_until(check, what, lambda: self.calls[-20:])

    async def wait_for_messages(self, channel: str, count: int = 1) -> list[str]:
        return await wait_for_finished(
            lambda: self.chat_messages(channel), count, channel, lambda: self.calls[-20:]
        )

    # --- REST ---------------------------------------------------------------------------------

    def _authorized(self, request: Request) -> bool:
        return request.headers.get("authorization") == f"Bot {TOKEN}"

    def _message(self, sent: Sent) -> dict[str, Any]:
        return {
            "id": sent.id,
            "channel_id": sent.channel,
            "author": _user(BOT_ID, "countbot", bot=True),
            "content": sent.text,
            "timestamp": _now(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [
                {
                    "id": str(next(self._ids)),
                    "filename": n,
                    "size": len(d),
                    "url": "",
                    "proxy_url": "",
                }
                for n, d in sent.files
            ],
            "embeds": [],
            "pinned": False,
            "type": 0,
            "components": sent.components,
        }

    async def _me(self, request: Request) -> Response:
        self.calls.append("GET /users/@me")
        if not self._authorized(request):
            return JSONResponse({"message": "401: Unauthorized", "code": 0}, 401)
        return JSONResponse(_user(BOT_ID, "countbot", bot=True))

    async def _application(self, request: Request) -> Response:
        assert self._authorized(request)
        return JSONResponse(
            {
                "id": str(BOT_ID),
                "name": "CountBot",
                "description": "",
                "icon": None,
                "bot_public": False,
                "bot_require_code_grant": False,
                "owner": _user(500000000000000001, "alice"),
                "verify_key": "0" * 64,
                "flags": 0,
            }
        )

    async def _create(self, request: Request) -> Response:
        channel = request.path_params["channel"]
        self.calls.append(f"POST /channels/{channel}/messages")
        assert self._authorized(request)
        status, times = self._refusals.get(channel, (0, 0))
        if times > 0:
            self._refusals[channel] = (status, times - 1)
            return JSONResponse({"message": "Missing Access", "code": 50001}, status)
        files: list[tuple[str, bytes]] = []
        if request.headers.get("content-type", "").startswith("multipart/"):
            form = await request.form()
            body = json.loads(str(form["payload_json"]))
            for key, value in form.multi_items():
                if key.startswith("files[") and not isinstance(value, str):
                    files.append((str(value.filename), await value.read()))
        else:
            body = await request.json()
        assert body.get("allowed_mentions") == {"parse": []}, "an answer could ping someone"
        content = str(body.get("content") or "")
        text = content or " ".join(f"[file {n}]" for n, _ in files)
        sent = Sent(channel, str(next(self._ids)), [text], body.get("components") or [], files)
        self.sent.append(sent)
        return JSONResponse(self._message(sent))

    async def _edit(self, request: Request) -> Response:
        assert self._authorized(request)
        sent = next(s for s in self.sent if s.id == request.path_params["message"])
        self.calls.append(f"PATCH /channels/{sent.channel}/messages")
        body = await request.json()
        if "content" in body:
            sent.edits.append(str(body["content"]))
        if "components" in body:
            sent.components = body["components"] or []
        return JSONResponse(self._message(sent))

    async def _typing(self, request: Request) -> Response:
        assert self._authorized(request)
        self.typing.append(request.path_params["channel"])
        return Response(status_code=204)

    async def _callback(self, request: Request) -> Response:
        body = await request.json()
        self.callbacks.append(body)
        interaction = {"id": request.path_params["id"], "type": 3}
        return JSONResponse({"interaction": interaction})

    async def _cdn(self, request: Request) -> Response:
        self.files_served += 1
        return Response(self._files[request.path_params["file"]])

    # --- gateway ------------------------------------------------------------------------------

    async def _gateway(self, websocket: WebSocket) -> None:
        if self._down:
            await websocket.close()
            return
        await websocket.accept()
        await websocket.send_text(json.dumps({"op": 10, "d": {"heartbeat_interval": 41250}}))
        sent_upto: int | None = None  # None until IDENTIFY or RESUME
        reader: asyncio.Task[dict[str, Any]] | None = None
        try:
            while True:
                if reader is None:
                    reader = asyncio.ensure_future(websocket.receive_json())
                self._wake.clear()
                waker = asyncio.ensure_future(self._wake.wait())
                await asyncio.wait({reader, waker}, return_when=asyncio.FIRST_COMPLETED)
                waker.cancel()
                if reader.done():
                    frame, reader = reader.result(), None
                    sent_upto = await self._answer(websocket, frame, sent_upto)
                if sent_upto is not None:
                    for seq, dispatch in self._log:
                        if seq > sent_upto:
                            await websocket.send_text(json.dumps(dispatch))
                            sent_upto = seq
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            if reader is not None:
                reader.cancel()
            if self._socket is websocket:
                self._socket = None

    async def _answer(
        self, websocket: WebSocket, frame: dict[str, Any], sent_upto: int | None
    ) -> int | None:
        op, data = frame.get("op"), frame.get("d")
        if op == 1:  # HEARTBEAT
            await websocket.send_text(json.dumps({"op": 11}))
        elif op == 2:  # IDENTIFY: a new session; what happened before it is not replayed
            if data["token"] != TOKEN:
                await websocket.close(code=4004)
                return sent_upto
            self.identified += 1
            self._session = uuid.uuid4().hex
            self._socket = websocket
            seq = next(self._seq)
            ready = {
                "v": 10,
                "user": _user(BOT_ID, "countbot", bot=True),
                "guilds": [],
                "session_id": self._session,
                "resume_gateway_url": self.gateway_url,
                "application": {"id": str(BOT_ID), "flags": 0},
                "private_channels": [],
            }
            await websocket.send_text(json.dumps({"op": 0, "t": "READY", "s": seq, "d": ready}))
            return max((s for s, _ in self._log), default=seq)
        elif op == 6:  # RESUME: replay every dispatch after the client's sequence
            if data["session_id"] != self._session or data["token"] != TOKEN:
                await websocket.send_text(json.dumps({"op": 9, "d": False}))
                return sent_upto
            self.resumed += 1
            self._socket = websocket
            for seq, dispatch in self._log:
                if seq > int(data["seq"] or 0):
                    await websocket.send_text(json.dumps(dispatch))
            seq = next(self._seq)
            resumed = {"op": 0, "t": "RESUMED", "s": seq, "d": {}}
            await websocket.send_text(json.dumps(resumed))
            return max((s for s, _ in self._log), default=seq)
        return sent_upto
