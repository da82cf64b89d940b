"""The WebSocket protocol's client frames, parsed and validated into typed commands.

Anything that does not fit becomes a `ProtocolError` naming the problem; nothing here runs a tool.
See docs/protocol.md for the contract.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from countbot.gateway.messages import QUEUE_MODES, QueueMode
from countbot.llm.types import ImagePart
from countbot.runtime.approvals import DECISIONS
from countbot.text.text_repair import JsonTextError, loads_untrusted
from countbot.tools.approval import ApprovalDecision

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_SESSION_ID = 200
MAX_CLIENT_ID = 64
MAX_MODEL = 200
MAX_ATTACHMENTS = 8
MAX_FILE_NAME = 300
_ATTACHMENT = ("file", "name", "kind")
_VIA = re.compile(r"[a-z][a-z0-9:_-]{0,31}")
# The daemon's own surfaces a message frame may come from.
SURFACES = ("web", "cli")


@dataclass(frozen=True, slots=True)
class SendMessage:
    session_id: str | None
    content: str
    media: tuple[ImagePart, ...]
    mode: QueueMode | None
    client_id: str | None
    # A stored user message this one replaces, with everything after it (regenerate, edit).
    replace_from: int | None = None
    # The model this chat picks (remembered for the session); checked against the configured.
    model: str | None = None
    # Files uploaded before (`POST /api/media`), named by where they were saved.
    attachments: tuple[Upload, ...] = ()
    # Which of the daemon's own surfaces sent it: "cli" for `countbot chat`, else "web". The
    # turn is told where the person is reading; a client cannot claim a chat platform.
    via: str = "web"
    # The agent the owner picked (the agent switcher, `countbot chat --agent`); None: the
    # session's own, or for a new session the one the bindings give this surface.
    agent: str | None = None


@dataclass(frozen=True, slots=True)
class Upload:
    """A file `POST /api/media` saved (`file`, workspace-relative), sent with a message."""

    file: str
    name: str
    kind: str  # "voice" or "file"


@dataclass(frozen=True, slots=True)
class Cancel:
    session_id: str


@dataclass(frozen=True, slots=True)
class Subscribe:
    session_id: str
    last_seq: int | None
    # Also send what a running turn produced so far (a page opened mid-answer).
    replay_turn: bool = False


@dataclass(frozen=True, slots=True)
class Unsubscribe:
    session_id: str


@dataclass(frozen=True, slots=True)
class Ping:
    pass


@dataclass(frozen=True, slots=True)
class ApprovalResponse:
    """The user's answer to an `approval_request`."""

    id: str
    decision: ApprovalDecision
    # Which client answered, for the audit ("cli" for `countbot chat`); "web" when not given.
    via: str = "web"


@dataclass(frozen=True, slots=True)
class SubscribeNotices:
    """Receive the frames about no one session: daemon status and session-list changes."""


ClientFrame = (
    SendMessage | Cancel | Subscribe | Unsubscribe | Ping | ApprovalResponse | SubscribeNotices
)


class ProtocolError(ValueError):
    """A frame the server refuses; `client_id` is echoed when the frame had a usable one."""

    def __init__(self, message: str, client_id: str | None = None) -> None:
        super().__init__(message)
        self.client_id = client_id


def parse_frame(text: str) -> ClientFrame:
    """One client text frame as a command; raises ProtocolError."""
    try:
        data = loads_untrusted(text)
    except JsonTextError as exc:
        raise ProtocolError(str(exc)) from None
    if not isinstance(data, dict):
        raise ProtocolError(f"a frame must be a JSON object, not {type(data).__name__}")
    kind = data.get("type")
    if kind is None:
        raise ProtocolError("frame has no 'type'")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise ProtocolError(f"unknown frame type: {kind!r}")
    return parser(data)


def _message(data: dict[str, Any]) -> SendMessage:
    client_id = data.get("client_id")
    if client_id is not None and (not isinstance(client_id, str) or len(client_id) > MAX_CLIENT_ID):
        raise ProtocolError(f"message: 'client_id' must be a string of at most {MAX_CLIENT_ID}")
    try:
        session_id = _session_id(data, "message", optional=True)
        content = data.get("content")
        if not isinstance(content, str):
            raise ProtocolError("message: 'content' must be a string")
        media = _media(data.get("media"))
        attachments = _attachments(data.get("attachments"))
        if not content.strip() and not media and not attachments:
            raise ProtocolError("message: 'content' is empty and there is no media")
        mode = data.get("mode")
        if mode is not None and mode not in QUEUE_MODES:
            raise ProtocolError(f"message: 'mode' must be one of {', '.join(QUEUE_MODES)}")
        replace_from = _replace_from(data.get("replace_from"), session_id)
        model = data.get("model")
        if model is not None and (not isinstance(model, str) or not 0 < len(model) <= MAX_MODEL):
            raise ProtocolError(f"message: 'model' must be a string of 1 to {MAX_MODEL} characters")
        via = data.get("via", "web")
        if via not in SURFACES:
            raise ProtocolError(f"message: 'via' must be one of {', '.join(SURFACES)}")
        agent = data.get("agent")
        if agent is not None and (not isinstance(agent, str) or not 0 < len(agent) <= MAX_MODEL):
            raise ProtocolError(f"message: 'agent' must be a string of 1 to {MAX_MODEL} characters")
    except ProtocolError as exc:
        raise ProtocolError(str(exc), client_id) from None
    return SendMessage(
        session_id, content, media, mode, client_id, replace_from, model, attachments, via, agent
    )


def _replace_from(value: Any, session_id: str | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ProtocolError("message: 'replace_from' must be a positive integer")
    if session_id is None:
        raise ProtocolError("message: 'replace_from' needs a 'session_id'")
    return value


def _attachments(value: Any) -> tuple[Upload, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_ATTACHMENTS:
        raise ProtocolError(f"message: 'attachments' must be a list of at most {MAX_ATTACHMENTS}")
    found = []
    for index, item in enumerate(value):
        fields = [item.get(key) if isinstance(item, dict) else None for key in _ATTACHMENT]
        if not all(isinstance(f, str) and 0 < len(f) <= MAX_FILE_NAME for f in fields):
            raise ProtocolError(
                f"message: attachments[{index}] must have 'file', 'name' and 'kind' strings"
            )
        file, name, kind = fields
        if kind not in ("voice", "file"):
            raise ProtocolError(f"message: attachments[{index}]: 'kind' must be voice or file")
        found.append(Upload(file, name, kind))
    return tuple(found)


def _media(value: Any) -> tuple[ImagePart, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ProtocolError("message: 'media' must be a list")
    images = []
    for index, item in enumerate(value):
        where = f"message: media[{index}]"
        if not isinstance(item, dict) or item.get("type") != "image":
            raise ProtocolError(f"{where} must be an object with type 'image'")
        media_type, data = item.get("media_type"), item.get("data")
        if media_type not in IMAGE_TYPES:
            allowed = ", ".join(sorted(IMAGE_TYPES))
            raise ProtocolError(f"{where}: 'media_type' must be one of {allowed}")
        if not isinstance(data, str) or not data:
            raise ProtocolError(f"{where}: 'data' must be a non-empty base64 string")
        images.append(ImagePart(media_type, data=data))
    return tuple(images)


def _session_id(data: dict[str, Any], frame: str, *, optional: bool = False) -> Any:
    if "session_id" not in data and not optional:
        raise ProtocolError(f"{frame}: 'session_id' is missing")
    value = data.get("session_id")
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value or len(value) > MAX_SESSION_ID:
        raise ProtocolError(
            f"{frame}: 'session_id' must be a non-empty string of at most {MAX_SESSION_ID}"
        )
    return value


def _subscribe(data: dict[str, Any]) -> Subscribe:
    session_id = _session_id(data, "subscribe")
    last_seq = data.get("last_seq")
    if last_seq is not None and (isinstance(last_seq, bool) or not isinstance(last_seq, int)):
        raise ProtocolError("subscribe: 'last_seq' must be an integer or null")
    replay_turn = data.get("replay_turn", False)
    if not isinstance(replay_turn, bool):
        raise ProtocolError("subscribe: 'replay_turn' must be true or false")
    return Subscribe(session_id, last_seq, replay_turn)


def _approval_response(data: dict[str, Any]) -> ApprovalResponse:
    approval_id, decision = data.get("id"), data.get("decision")
    if not isinstance(approval_id, str) or not approval_id or len(approval_id) > MAX_CLIENT_ID:
        raise ProtocolError(f"approval_response: 'id' must be a string of at most {MAX_CLIENT_ID}")
    if decision not in DECISIONS:
        raise ProtocolError(f"approval_response: 'decision' must be one of {', '.join(DECISIONS)}")
    via = data.get("via", "web")
    if not isinstance(via, str) or not _VIA.fullmatch(via):
        raise ProtocolError("approval_response: 'via' must be a short lowercase name like 'cli'")
    return ApprovalResponse(approval_id, decision, via)


_PARSERS = {
    "message": _message,
    "cancel": lambda data: Cancel(_session_id(data, "cancel")),
    "subscribe": _subscribe,
    "unsubscribe": lambda data: Unsubscribe(_session_id(data, "unsubscribe")),
    "ping": lambda data: Ping(),
    "approval_response": _approval_response,
    "subscribe_notices": lambda data: SubscribeNotices(),
}
