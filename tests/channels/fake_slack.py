"""A fake Slack on 127.0.0.1 that slack-sdk's `AsyncWebClient` and Socket Mode client really use.

Web API (`/api/<method>`, JSON or form bodies, Bearer tokens): `auth.test`,
`apps.connections.open` (the app token; answers with this server's WebSocket URL),
`chat.postMessage`, `chat.update`, `chat.postEphemeral`, and the two-step file upload
(`files.getUploadURLExternal`, a POST of the bytes, `files.completeUploadExternal`). Files users
shared are served at `url_private_download`, to the bot token only. Socket Mode: a `hello`,
then envelopes the client acknowledges with their `envelope_id`; an outage closes the socket and
fails `apps.connections.open` until it ends; envelopes never acknowledged are sent again on the
next connection, as Slack does.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from tests.channels.loopback import LoopbackServer, wait_for_finished, wait_until

BOT_TOKEN = "xoxb-fake-bot-token"
APP_TOKEN = "xapp-fake-app-token"
BOT_USER = "UBOT0001"
TEAM = "T0001"


@dataclass(slots=True)
class Posted:
    """A message the bot posted; `edits` holds every text it had, the first included."""

    channel: str
    thread: str | None
    ts: str
    edits: list[str]
    blocks: list[dict[str, Any]] | None = None

    @property
    def text(self) -> str:
        return self.edits[-1]

    @property
    def chat(self) -> str:
        return f"{self.channel}/{self.thread}" if self.thread else self.channel


@dataclass
class FakeSlack:
    posted: list[Posted] = field(default_factory=list)
    ephemeral: list[tuple[str, str, str]] = field(default_factory=list)
    uploads: list[tuple[str, str, bytes]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self._files: dict[str, bytes] = {}
        self.files_served = 0  # downloads of what users shared
        self._upload_names: dict[str, str] = {}
        self._pending: list[tuple[str, dict[str, Any]]] = []
        self._socket: WebSocket | None = None
        self._wake = asyncio.Event()
        self._down = False
        self._refusals: dict[str, tuple[str, int]] = {}
        self._http = LoopbackServer()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self._http.port}/api/"

    async def start(self) -> None:
        await self._http.serve(
            [
                Route("/api/{method}", self._api, methods=["POST"]),
                Route("/upload/{file_id}", self._upload, methods=["POST"]),
                Route("/files/{file_id}", self._file, methods=["GET"]),
                WebSocketRoute("/socket", self._socket_mode),
            ]
        )

    async def stop(self) -> None:
        self._wake.set()
        await self._http.shutdown()

    # --- what users and tests do --------------------------------------------------------------

    def _ts(self) -> str:
        return f"1700000000.{next(self._ids):06d}"

    def user_says(
        self,
        text: str,
        *,
        user: str,
        channel: str = "D0001",
        thread: str | None = None,
        mention: bool = False,
        picture: bytes | None = None,
    ) -> dict[str, Any]:
        """A person writes; returns the envelope, to deliver it again. In a DM (`D...`) this is
        a `message` event; in a channel an `app_mention` when `mention`, else a plain `message`
        (which Slack sends to apps subscribed to channel history)."""
        direct = channel.startswith("D")
        body = f"<@{BOT_USER}> {text}" if mention else text
        event: dict[str, Any] = {
            "type": "app_mention" if mention and not direct else "message",
            "user": user,
            "text": body,
            "ts": self._ts(),
            "channel": channel,
            "channel_type": "im" if direct else "channel",
            "event_ts": "",
        }
        event["event_ts"] = event["ts"]
        if thread is not None:
            event["thread_ts"] = thread
        if picture is not None:
            file_id = f"F{next(self._ids):05d}"
            self._files[file_id] = picture
            event["subtype"] = "file_share"
            event["files"] = [
                {
                    "id": file_id,
                    "name": "photo.jpg",
                    "mimetype": "image/jpeg",
                    "url_private_download": f"http://127.0.0.1:{self._http.port}/files/{file_id}",
                }
            ]
        payload = {
            "token": "verification",
            "team_id": TEAM,
            "api_app_id": "A0001",
            "event": event,
            "type": "event_callback",
            "event_id": f"Ev{next(self._ids)}",
            "event_time": 1700000000,
        }
        return self.push("events_api", payload)

    def press(self, user: str, chat: str, value: str) -> dict[str, Any]:
        """`user` presses the button carrying `value` on the last message with buttons in `chat`."""
        message = next(p for p in reversed(self.posted) if p.chat == chat and p.blocks)
        payload = {
            "type": "block_actions",
            "user": {"id": user, "username": user.lower(), "name": user.lower()},
            "channel": {"id": message.channel},
            "message": {
                "ts": message.ts,
                **({"thread_ts": message.thread} if message.thread else {}),
            },
            "actions": [{"action_id": "countbot-0", "value": value, "type": "button"}],
        }
        return self.push("interactive", payload)

    def push(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        envelope = {
            "envelope_id": str(uuid.uuid4()),
            "type": kind,
            "payload": payload,
            "accepts_response_payload": False,
            "retry_attempt": 0,
            "retry_reason": "",
        }
        self.redeliver(envelope)
        return envelope

    def redeliver(self, envelope: dict[str, Any]) -> None:
        self._pending.append((envelope["envelope_id"], envelope))
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

    def refuse(self, method: str, error: str, times: int = 1) -> None:
        self._refusals[method] = (error, times)

    def chat_messages(self, chat: str) -> list[str]:
        return [p.text for p in self.posted if p.chat == chat]

    async def wait_until(self, check: Callable[[], bool], what: str = "condition") -> None:
        await wait_until(check, what, lambda: self.calls[-20:])

    async def wait_for_messages(self, chat: str, count: int = 1) -> list[str]:
        return await wait_for_finished(
            lambda: self.chat_messages(chat), count, chat, lambda: self.calls[-20:]
        )

    # --- Web API ------------------------------------------------------------------------------

    async def _api(self, request: Request) -> Response:
        method = request.path_params["method"]
        self.calls.append(method)
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        wanted = APP_TOKEN if method == "apps.connections.open" else BOT_TOKEN
        if token != wanted:
            return JSONResponse({"ok": False, "error": "invalid_auth"})
        if request.headers.get("content-type", "").startswith("application/json"):
            body: dict[str, Any] = await request.json()
        else:
            body = dict(await request.form())
        body.update(request.query_params)  # some methods send their arguments as a query
        error, times = self._refusals.get(method, ("", 0))
        if times > 0:
            self._refusals[method] = (error, times - 1)
            return JSONResponse({"ok": False, "error": error})
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        if handler is None:
            return JSONResponse({"ok": False, "error": "unknown_method"}, 404)
        answer: dict[str, Any] = await handler(body)
        return JSONResponse({"ok": True, **answer})

    async def _auth_test(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"user_id": BOT_USER, "user": "countbot", "team_id": TEAM, "bot_id": "B0001"}

    async def _apps_connections_open(self, body: dict[str, Any]) -> dict[str, Any]:
        if self._down:
            return {"ok": False, "error": "service_unavailable"}  # replaces the `ok: true`
        return {"url": f"ws://127.0.0.1:{self._http.port}/socket?ticket={uuid.uuid4().hex}"}

    async def _chat_postMessage(self, body: dict[str, Any]) -> dict[str, Any]:
        blocks = body.get("blocks")
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        ts = self._ts()
        thread = body.get("thread_ts") or None
        self.posted.append(Posted(body["channel"], thread, ts, [body["text"]], blocks or None))
        return {"channel": body["channel"], "ts": ts}

    async def _chat_update(self, body: dict[str, Any]) -> dict[str, Any]:
        posted = next(p for p in self.posted if p.ts == body["ts"])
        posted.edits.append(body["text"])
        if body.get("blocks") in ([], "[]"):
            posted.blocks = None
        return {"channel": posted.channel, "ts": posted.ts}

    async def _chat_postEphemeral(self, body: dict[str, Any]) -> dict[str, Any]:
        self.ephemeral.append((body["channel"], body["user"], body["text"]))
        return {"message_ts": self._ts()}

    async def _files_getUploadURLExternal(self, body: dict[str, Any]) -> dict[str, Any]:
        file_id = f"F{next(self._ids):05d}"
        self._upload_names[file_id] = str(body["filename"])
        return {
            "upload_url": f"http://127.0.0.1:{self._http.port}/upload/{file_id}",
            "file_id": file_id,
        }

    async def _files_completeUploadExternal(self, body: dict[str, Any]) -> dict[str, Any]:
        files = json.loads(body["files"])
        channel = str(body.get("channel_id") or body.get("channels"))
        thread = body.get("thread_ts") or None
        for item in files:
            name = self._upload_names[item["id"]]
            self.uploads.append((channel, name, self._files[item["id"]]))
            self.posted.append(Posted(channel, thread, self._ts(), [f"[file {name}]"]))
        return {"files": [{"id": item["id"]} for item in files]}

    async def _upload(self, request: Request) -> Response:
        self._files[request.path_params["file_id"]] = await request.body()
        return Response("OK - uploaded")

    async def _file(self, request: Request) -> Response:
        if request.headers.get("authorization") != f"Bearer {BOT_TOKEN}":
            return Response("not allowed", 403)
        self.files_served += 1
        return Response(self._files[request.path_params["file_id"]])

    # --- Socket Mode --------------------------------------------------------------------------

    async def _socket_mode(self, websocket: WebSocket) -> None:
        if self._down:
            await websocket.close()
            return
        await websocket.accept()
        self._socket = websocket
        await websocket.send_text(json.dumps({"type": "hello", "num_connections": 1}))
        reader = asyncio.create_task(self._read_acks(websocket))
        sent: set[str] = set()
        try:
            while not reader.done():
                for envelope_id, envelope in list(self._pending):
                    if envelope_id not in sent:
                        sent.add(envelope_id)
                        await websocket.send_text(json.dumps(envelope))
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
                acked = ack.get("envelope_id")
                self._pending = [p for p in self._pending if p[0] != acked]
