"""The events a session's watchers receive: the agent's events plus the gateway's own notices."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from countbot.agent.events import AgentEvent, event_to_dict
from countbot.common.authorship import OWNER, Author, Part
from countbot.llm.types import ImagePart
from countbot.runtime.approvals import ApprovalAsked, ApprovalSettled


@dataclass(frozen=True, slots=True)
class MessageAccepted:
    """A user message entered the session; `queued` when it waits behind a running turn.

    The connection that sent it sees an acknowledgement, every other watcher sees the message,
    so two tabs (or a tab and a channel) show the whole conversation.
    """

    content: str
    channel: str
    queued: bool
    mode: str
    media: tuple[ImagePart, ...] = ()
    # Who sent it (a watcher) and the sender's own tag for the message; both only for the ack.
    origin: object | None = None
    client_id: str | None = None
    # What came with it (a voice note, a document): surfaces show the files, not their text.
    parts: tuple[Part, ...] = ()
    # Who wrote it: a subagent's report is not drawn as the user's own message.
    author: Author = OWNER
    type: Literal["accepted"] = "accepted"

    def files(self) -> list[dict[str, str]]:
        """The files sent with it as the web UI shows them (a voice note with its words)."""
        return [
            {
                "file": part.file,
                "name": part.name,
                "kind": "voice" if part.kind == "voice" else "file",
                "text": part.text if part.kind == "voice" else "",
            }
            for part in self.parts
            if part.file
        ]


@dataclass(frozen=True, slots=True)
class SubagentUpdate:
    """A subagent of this session was spawned, started or ended (for the chat's running list).

    Not part of any turn: chat channels ignore it, the web UI shows it under the chat.
    """

    id: str
    label: str
    status: str
    subagent_session: str
    type: Literal["subagent"] = "subagent"


# Approval questions and their ends travel in the session's stream like the agent's events.
GatewayEvent = AgentEvent | MessageAccepted | ApprovalAsked | ApprovalSettled | SubagentUpdate


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """One event in a session's stream, numbered by a per-session increasing `seq`."""

    session_id: str
    seq: int
    event: GatewayEvent

    def to_frame(self, viewer: object | None = None) -> dict[str, Any]:
        """The JSON-ready frame for `viewer`: the sender of a message sees an ack, others see it.

        Pass no viewer for a replay, where every watcher sees the message itself.
        """
        event = self.event
        if isinstance(event, MessageAccepted):
            body: dict[str, Any]
            if viewer is not None and viewer is event.origin:
                body = {"type": "session", "queued": event.queued}
                if event.client_id is not None:
                    body["client_id"] = event.client_id
                if event.parts:
                    body["attachments"] = event.files()
            else:
                body = {"type": "user_message", "content": event.content, "channel": event.channel}
                if event.parts:
                    body["attachments"] = event.files()
                if not event.author.owned:
                    body["author"] = event.author.record()
                if event.media:
                    body["media"] = [
                        {"type": "image", "media_type": i.media_type, "data": i.data}
                        for i in event.media
                    ]
        elif isinstance(event, ApprovalAsked | ApprovalSettled):
            body = event.to_dict()
        else:
            body = event_to_dict(event)
        body["session_id"] = self.session_id
        body["seq"] = self.seq
        return body
