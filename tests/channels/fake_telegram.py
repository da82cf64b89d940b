"""A fake Telegram Bot API server on 127.0.0.1 that python-telegram-bot really talks to.

Point `base_url`/`base_file_url` at it. It implements what the channel uses (getMe,
deleteWebhook, getUpdates with long polling and offsets, sendMessage, editMessageText,
sendChatAction, getFile and downloads, sendPhoto, sendDocument), records every call, keeps each
bot message's current text, and can refuse calls (429 with retry_after, 400, 403). Like Telegram,
after a 429 it counts any further call for that chat before retry_after ran out as a violation.
It runs in the test's event loop and can stop and start again on the same port with its state
(pending updates, sent messages) intact, like a Telegram outage.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

TOKEN = "123456789:AAFakeTokenForTestsOnly_abcdefghijkl"
BOT_ID = 123456789
BOT_USERNAME = "countbot_test_bot"
BOT_USER = {"id": BOT_ID, "is_bot": True, "first_name": "CountBot", "username": BOT_USERNAME}
WAIT = 60.0  # an upper bound for a loaded 2-core CI machine; passing tests never wait it out


@dataclass(slots=True)
class Call:
    method: str
    params: dict[str, str]
    files: dict[str, bytes]
    at: float
    status: int = 200

    @property
    def chat_id(self) -> str | None:
        return self.params.get("chat_id")

    @property
    def text(self) -> str:
        return self.params.get("text", "")


@dataclass(slots=True)
class _Refusal:
    method: str
    status: int
    description: str
    retry_after: int | None
    times: int


@dataclass(slots=True)
class _BotMessage:
    chat_id: str
    message_id: int
    text: str
    edits: int = 0
    kind: str = "text"
    # The inline keyboard's buttons as (label, callback data); an edit without one removes it.
    buttons: list[tuple[str, str]] = field(default_factory=list)


@dataclass(slots=True)
class FakeUser:
    id: int
    first_name: str = "Alice"
    username: str | None = "alice"

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.username:
            data["username"] = self.username
        return data


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class FakeTelegram:
    token: str = TOKEN
    calls: list[Call] = field(default_factory=list)
    violations: list[Call] = field(default_factory=list)
    port: int = 0

    def __post_init__(self) -> None:
        self._updates: list[dict[str, Any]] = []
        self._confirmed = 0  # updates below this id were confirmed (deleted)
        self._update_ids = itertools.count(1000)
        self._message_ids = itertools.count(1)
        self._files: dict[str, tuple[str, bytes]] = {}
        self._messages: dict[tuple[str, int], _BotMessage] = {}
        self._by_chat: dict[str, list[_BotMessage]] = {}  # each chat's, oldest first
        self._chats: dict[str, dict[str, Any]] = {}
        self._refusals: list[_Refusal] = []
        self._blocked_until: dict[str, float] = {}
        self._arrived = asyncio.Event()
        self._stopping = False
        self._server: _Server | None = None
        self._listener: socket.socket | None = None
        self._serving: asyncio.Task[None] | None = None

    # --- lifecycle ------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/file/bot"

    async def start(self) -> None:
        """Listen (on the same port as before, after a `stop`)."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._stopping = False
        app = Starlette(
            routes=[
                Route("/bot{token}/{method}", self._api, methods=["GET", "POST"]),
                Route("/file/bot{token}/{path:path}", self._download, methods=["GET"]),
            ]
        )
        config = uvicorn.Config(
            app, lifespan="off", log_level="warning", timeout_graceful_shutdown=1
        )
        self._server = _Server(config)
        self._serving = asyncio.create_task(self._server.serve(sockets=[listener]))
        self._listener = listener
        server = self._server
        await self.wait_until(lambda: server.started, "the fake server to start")

    async def stop(self) -> None:
        """Go away: waiting long polls get a 502, then nothing listens on the port."""
        if self._server is None or self._serving is None:
            return
        self._stopping = True
        self._arrived.set()
        self._server.should_exit = True
        await self._serving
        if self._listener is not None:
            self._listener.close()
        self._server = self._serving = None

    # --- what users do ------------------------------------------------------------------------

    def user_says(
        self,
        text: str,
        *,
        user: FakeUser | None = None,
        chat_id: int | None = None,
        chat_type: str = "private",
        entities: list[dict[str, Any]] | None = None,
        reply_to: int | None = None,
    ) -> int:
        """A user writes `text`; returns the update's id."""
        extra: dict[str, Any] = {"text": text}
        if entities:
            extra["entities"] = entities
        return self._user_message(
            extra, user=user, chat_id=chat_id, chat_type=chat_type, reply_to=reply_to
        )

    def user_mentions_bot(self, text: str, **kwargs: Any) -> int:
        """A group message that starts with @bot_username."""
        mention = f"@{BOT_USERNAME}"
        entity = {"type": "mention", "offset": 0, "length": len(mention)}
        return self.user_says(f"{mention} {text}", entities=[entity], **kwargs)

    def user_sends_photo(self, data: bytes, *, caption: str = "", **kwargs: Any) -> int:
        file_id = self.add_file(data, "photos/file_1.jpg")
        size = {"file_id": file_id, "file_unique_id": f"u{file_id}", "width": 8, "height": 8}
        extra = {"photo": [{**size, "file_size": len(data)}], "caption": caption}
        return self._user_message(extra, **kwargs)

    def user_sends_document(
        self, data: bytes, name: str, mime_type: str, *, caption: str = "", **kwargs: Any
    ) -> int:
        file_id = self.add_file(data, f"documents/{name}")
        document = {
            "file_id": file_id,
            "file_unique_id": f"u{file_id}",
            "file_name": name,
            "mime_type": mime_type,
            "file_size": len(data),
        }
        return self._user_message({"document": document, "caption": caption}, **kwargs)

    def user_sends_voice(self, data: bytes, *, duration: int = 2, **kwargs: Any) -> int:
        """A voice note recorded in Telegram (OGG/Opus)."""
        file_id = self.add_file(data, "voice/file_1.oga")
        voice = {
            "file_id": file_id,
            "file_unique_id": f"u{file_id}",
            "duration": duration,
            "mime_type": "audio/ogg",
            "file_size": len(data),
        }
        return self._user_message({"voice": voice}, **kwargs)

    def add_file(self, data: bytes, path: str) -> str:
        file_id = f"file{len(self._files) + 1}"
        self._files[file_id] = (path, data)
        return file_id

    def user_presses(
        self, chat_id: int | str, message_id: int, data: str, *, user: FakeUser | None = None
    ) -> int:
        """A user presses an inline button under a bot message; returns the update's id."""
        user = user or FakeUser(100)
        message = self._message_json(self._messages[(str(chat_id), message_id)])
        query = {
            "id": f"q{next(self._update_ids)}",
            "from": user.as_json(),
            "message": message,
            "chat_instance": "ci1",
            "data": data,
        }
        update_id = next(self._update_ids)
        self._updates.append({"update_id": update_id, "callback_query": query})
        self._arrived.set()
        return update_id

    def buttons_of(self, chat_id: int | str, message_id: int) -> list[tuple[str, str]]:
        return self._messages[(str(chat_id), message_id)].buttons

    def message_text(self, chat_id: int | str, message_id: int) -> str:
        return self._messages[(str(chat_id), message_id)].text

    def repeat_last_message(self) -> int:
        """Deliver the last user message again in a new update (as Telegram may, rarely)."""
        update_id = next(self._update_ids)
        self._updates.append({"update_id": update_id, "message": self._updates[-1]["message"]})
        self._arrived.set()
        return update_id

    def forget_confirmations(self, back_to: int) -> None:
        """Offer updates from `back_to` on again, as if the bot had never confirmed them."""
        self._confirmed = min(self._confirmed, back_to)
        self._arrived.set()

    def _user_message(
        self,
        extra: dict[str, Any],
        *,
        user: FakeUser | None = None,
        chat_id: int | None = None,
        chat_type: str = "private",
        reply_to: int | None = None,
    ) -> int:
        user = user or FakeUser(100)
        chat_id = chat_id if chat_id is not None else user.id
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat["first_name"] = user.first_name
        else:
            chat["title"] = "A group"
        self._chats[str(chat_id)] = chat
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": chat,
            "from": user.as_json(),
            **extra,
        }
        if reply_to is not None:
            original = self._messages[(str(chat_id), reply_to)]
            message["reply_to_message"] = self._message_json(original)
        update_id = next(self._update_ids)
        self._updates.append({"update_id": update_id, "message": message})
        self._arrived.set()
        return update_id

    # --- test controls and views --------------------------------------------------------------

    def refuse(
        self,
        method: str,
        *,
        status: int = 429,
        retry_after: int | None = None,
        description: str = "",
        times: int = 1,
    ) -> None:
        """Answer the next `times` calls of `method` with an error."""
        text = description or ("Too Many Requests" if status == 429 else "Bad Request")
        self._refusals.append(_Refusal(method, status, text, retry_after, times))

    def calls_to(self, method: str) -> list[Call]:
        return [call for call in self.calls if call.method == method]

    def chat_messages(self, chat_id: int | str) -> list[str]:
        """The bot's messages in a chat as the user sees them now, oldest first."""
        return [message.text for message in self._by_chat.get(str(chat_id), ())]

    def bot_message_ids(self, chat_id: int | str) -> list[int]:
        return [message.message_id for message in self._by_chat.get(str(chat_id), ())]

    async def wait_until(self, check: Callable[[], bool], what: str = "condition") -> None:
        deadline = time.monotonic() + WAIT
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; calls: {self._summary()}")
            await asyncio.sleep(0.02)

    async def wait_for_messages(self, chat_id: int | str, count: int = 1) -> list[str]:
        """Wait until the bot sent `count` messages to the chat, and none is a draft any more."""

        def finished() -> bool:
            texts = self.chat_messages(chat_id)
            return len(texts) >= count and not any(text.endswith(" …") for text in texts)

        await self.wait_until(finished, f"{count} finished message(s) in chat {chat_id}")
        return self.chat_messages(chat_id)

    def _summary(self) -> str:
        return ", ".join(f"{c.method}({c.status})" for c in self.calls[-30:])

    # --- the API ------------------------------------------------------------------------------

    async def _api(self, request: Request) -> Response:
        if request.path_params["token"] != self.token:
            return _error(401, "Unauthorized")
        method = request.path_params["method"]
        params, files = await _read_params(request)
        call = Call(method, params, files, asyncio.get_running_loop().time())
        self.calls.append(call)
        refused = self._refusal(call)
        if refused is not None:
            call.status = refused.status_code
            return refused
        handler = getattr(self, f"_{method}", None)
        if handler is None:
            call.status = 404
            return _error(404, "Not Found")
        result = await handler(call)
        if isinstance(result, Response):
            call.status = result.status_code
            return result
        return JSONResponse({"ok": True, "result": result})

    def _refusal(self, call: Call) -> Response | None:
        now = call.at
        chat = call.chat_id
        if chat is not None and self._blocked_until.get(chat, 0.0) > now:
            self.violations.append(call)
            remaining = max(1, int(self._blocked_until[chat] - now + 0.999))
            return _error(429, "Too Many Requests: flood control", retry_after=remaining)
        for refusal in self._refusals:
            if refusal.method == call.method and refusal.times > 0:
                refusal.times -= 1
                if refusal.retry_after is not None and chat is not None:
                    self._blocked_until[chat] = now + refusal.retry_after
                return _error(refusal.status, refusal.description, retry_after=refusal.retry_after)
        return None

    async def _getMe(self, call: Call) -> dict[str, Any]:
        return {**BOT_USER, "can_join_groups": True, "can_read_all_group_messages": False}

    async def _deleteWebhook(self, call: Call) -> bool:
        return True

    async def _getUpdates(self, call: Call) -> list[dict[str, Any]] | Response:
        offset = int(call.params.get("offset") or 0)
        if offset:
            self._confirmed = max(self._confirmed, offset)
        deadline = asyncio.get_running_loop().time() + float(call.params.get("timeout") or 0)
        while True:
            self._arrived.clear()
            if self._stopping:
                return _error(502, "Bad Gateway")
            pending = [u for u in self._updates if u["update_id"] >= self._confirmed]
            remaining = deadline - asyncio.get_running_loop().time()
            if pending or remaining <= 0:
                return pending[:100]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), remaining)

    async def _sendMessage(self, call: Call) -> dict[str, Any]:
        message = self._new_message(call, call.text)
        message.buttons = _buttons(call)
        return self._message_json(message)

    async def _answerCallbackQuery(self, call: Call) -> bool:
        return True

    async def _editMessageText(self, call: Call) -> dict[str, Any] | Response:
        key = (str(call.chat_id), int(call.params["message_id"]))
        message = self._messages.get(key)
        if message is None:
            return _error(400, "Bad Request: message to edit not found")
        if message.text == call.text:
            return _error(400, "Bad Request: message is not modified")
        message.text = call.text
        message.edits += 1
        message.buttons = _buttons(call)
        return self._message_json(message)

    async def _sendChatAction(self, call: Call) -> bool:
        return True

    async def _sendPhoto(self, call: Call) -> dict[str, Any]:
        message = self._new_message(call, call.params.get("caption", ""), kind="photo")
        return self._message_json(message)

    async def _sendDocument(self, call: Call) -> dict[str, Any]:
        message = self._new_message(call, call.params.get("caption", ""), kind="document")
        return self._message_json(message)

    async def _sendVoice(self, call: Call) -> dict[str, Any]:
        message = self._new_message(call, call.params.get("caption", ""), kind="voice")
        return self._message_json(message)

    async def _getFile(self, call: Call) -> dict[str, Any] | Response:
        file_id = call.params.get("file_id", "")
        if file_id not in self._files:
            return _error(400, "Bad Request: invalid file_id")
        path, data = self._files[file_id]
        return {
            "file_id": file_id,
            "file_unique_id": f"u{file_id}",
            "file_size": len(data),
            "file_path": path,
        }

    async def _download(self, request: Request) -> Response:
        if request.path_params["token"] != self.token:
            return Response(status_code=401)
        self.calls.append(Call("download", {"path": request.path_params["path"]}, {}, 0.0))
        for path, data in self._files.values():
            if path == request.path_params["path"]:
                return Response(data, media_type="application/octet-stream")
        return Response(status_code=404)

    def _new_message(self, call: Call, text: str, kind: str = "text") -> _BotMessage:
        message = _BotMessage(str(call.chat_id), next(self._message_ids), text, kind=kind)
        self._messages[(message.chat_id, message.message_id)] = message
        self._by_chat.setdefault(message.chat_id, []).append(message)
        return message

    def _message_json(self, message: _BotMessage) -> dict[str, Any]:
        chat = self._chats.get(message.chat_id) or {"id": int(message.chat_id), "type": "private"}
        data: dict[str, Any] = {
            "message_id": message.message_id,
            "date": int(time.time()),
            "chat": chat,
            "from": BOT_USER,
        }
        if message.kind == "photo":
            data["photo"] = [{"file_id": "sent", "file_unique_id": "s", "width": 1, "height": 1}]
        elif message.kind == "document":
            data["document"] = {"file_id": "sent", "file_unique_id": "s"}
        elif message.kind == "voice":
            data["voice"] = {"file_id": "sent", "file_unique_id": "s", "duration": 1}
        if message.text:
            data["caption" if message.kind != "text" else "text"] = message.text
        return data


async def _read_params(request: Request) -> tuple[dict[str, str], dict[str, bytes]]:
    """Form-encoded or multipart fields as text, uploads as bytes (PTB sends both)."""
    params: dict[str, str] = {}
    files: dict[str, bytes] = {}
    if request.method == "POST":
        form = await request.form()
        for key, value in form.multi_items():
            if isinstance(value, UploadFile):
                files[key] = await value.read()
            else:
                params[key] = value
    return params, files


def _error(status: int, description: str, *, retry_after: int | None = None) -> JSONResponse:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if retry_after is not None:
        body["parameters"] = {"retry_after": retry_after}
    return JSONResponse(body, status_code=status)


def _buttons(call: Call) -> list[tuple[str, str]]:
    if "reply_markup" not in call.params:
        return []
    rows = sent_json(call, "reply_markup").get("inline_keyboard", [])
    return [(b["text"], b["callback_data"]) for row in rows for b in row]


def sent_json(call: Call, key: str) -> Any:
    """A JSON-encoded parameter of a recorded call."""
    return json.loads(call.params[key])
