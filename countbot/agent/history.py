"""Provider-neutral history entries, their storage records, and projection to model messages.

Entries are what a session remembers; they become `llm` messages only when a request is built
(`project`), so notes never reach the model and a summary replaces what it covers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from countbot.common.authorship import OWNER, Author, Part, parts_from
from countbot.llm.types import (
    AssistantMessage,
    ContentPart,
    ImagePart,
    Message,
    TextPart,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)


@dataclass(frozen=True, slots=True)
class UserEntry:
    content: str
    images: tuple[ImagePart, ...] = ()
    # Per-turn context (current time, channel) sent with the message, kept out of the system prompt.
    context: str = ""
    ts: float = field(default_factory=time.time)
    type: Literal["user"] = "user"
    # Tokens this entry costs in a request, counted once when it is committed (0: not yet).
    tokens: int = 0
    # Who wrote `content` (decided by the surface it came from), and what came with it.
    author: Author = OWNER
    parts: tuple[Part, ...] = ()


@dataclass(frozen=True, slots=True)
class AssistantEntry:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str = ""
    model: str = ""
    provider: str = ""
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = "stop"
    ts: float = field(default_factory=time.time)
    type: Literal["assistant"] = "assistant"
    # Tokens this entry costs in a request, counted once when it is committed (0: not yet).
    tokens: int = 0
    # The untrusted content the turn had read when this was written (the data-flow ledger's
    # sources): memory keeps such an answer as not the owner's (it may repeat what it read).
    read: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolResultEntry:
    tool_call_id: str
    name: str
    content: str
    status: str = "ok"
    duration_ms: float = 0.0
    ts: float = field(default_factory=time.time)
    type: Literal["tool_result"] = "tool_result"
    images: tuple[ImagePart, ...] = ()
    # Tokens this entry costs in a request, counted once when it is committed (0: not yet).
    tokens: int = 0
    # Who wrote text in it that is not the owner's (`ToolResult.untrusted`).
    untrusted: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SummaryEntry:
    """Stands in for older entries that were summarized into MEMORY.md."""

    text: str
    ts: float = field(default_factory=time.time)
    type: Literal["summary"] = "summary"
    # Tokens this entry costs in a request, counted once when it is committed (0: not yet).
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class NoteEntry:
    """Shown to people (e.g. an iteration-limit notice) but never sent to the model.

    `code` names known notes ("cancelled", "no_model", "no_vision") so the UI shows them in the
    reader's language, the same way live and after a reload.
    """

    text: str
    ts: float = field(default_factory=time.time)
    code: str = ""
    type: Literal["note"] = "note"
    tokens: int = 0  # never sent, so it costs nothing


HistoryEntry = UserEntry | AssistantEntry | ToolResultEntry | SummaryEntry | NoteEntry


_USAGE_FIELDS = tuple(f.name for f in fields(Usage))
SUMMARY_HEADING = "[Summary of earlier conversation, also saved in MEMORY.md]"


def to_record(entry: HistoryEntry) -> dict[str, Any]:
    """A JSON-ready dict for storage (with the entry's token count once it has one)."""
    record = _record(entry)
    tokens = getattr(entry, "tokens", 0)
    if tokens:
        record["tokens"] = tokens
    return record


def _record(entry: HistoryEntry) -> dict[str, Any]:
    if isinstance(entry, UserEntry):
        return {
            "type": "user",
            "content": entry.content,
            "images": _image_records(entry.images),
            "context": entry.context,
            "author": entry.author.record(),
            **({"parts": [part.record() for part in entry.parts]} if entry.parts else {}),
            "ts": entry.ts,
        }
    if isinstance(entry, AssistantEntry):
        return {
            "type": "assistant",
            "text": entry.text,
            "tool_calls": [
                {
                    "id": c.id,
                    "name": c.name,
                    "arguments_raw": c.arguments_raw,
                    "parse_error": c.parse_error,
                }
                for c in entry.tool_calls
            ],
            "reasoning": entry.reasoning,
            "model": entry.model,
            "provider": entry.provider,
            # from_record reads it back as Usage(**usage); asdict's deep copy is slower
            "usage": {name: getattr(entry.usage, name) for name in _USAGE_FIELDS},
            "stop_reason": entry.stop_reason,
            # Always written: a record without it was stored before answers said what their
            # turn had read (`memory_index/sources.py` then judges by its turn's tool results).
            "read": list(entry.read),
            "ts": entry.ts,
        }
    if isinstance(entry, ToolResultEntry):
        return {
            "type": "tool_result",
            "tool_call_id": entry.tool_call_id,
            "name": entry.name,
            "content": entry.content,
            "status": entry.status,
            "duration_ms": entry.duration_ms,
            **({"images": _image_records(entry.images)} if entry.images else {}),
            **({"untrusted": list(entry.untrusted)} if entry.untrusted else {}),
            "ts": entry.ts,
        }
    record: dict[str, Any] = {"type": entry.type, "text": entry.text, "ts": entry.ts}
    if isinstance(entry, NoteEntry) and entry.code:
        record["code"] = entry.code
    return record


def from_record(record: dict[str, Any]) -> HistoryEntry:
    """Rebuild an entry from its stored dict (extra keys such as `id` are ignored)."""
    kind = record["type"]
    ts = float(record.get("ts") or 0.0)
    tokens = int(record.get("tokens") or 0)
    if kind == "user":
        images = _images(record)
        return UserEntry(
            record.get("content", ""),
            images,
            record.get("context", ""),
            ts,
            tokens=tokens,
            author=Author.from_record(record.get("author")),
            parts=parts_from(record.get("parts")),
        )
    if kind == "assistant":
        calls = tuple(
            ToolCall(c["id"], c["name"], c.get("arguments_raw", ""), None, c.get("parse_error"))
            for c in record.get("tool_calls") or ()
        )
        return AssistantEntry(
            text=record.get("text", ""),
            tool_calls=calls,
            reasoning=record.get("reasoning", ""),
            model=record.get("model", ""),
            provider=record.get("provider", ""),
            usage=Usage(**(record.get("usage") or {})),
            stop_reason=record.get("stop_reason", "stop"),
            ts=ts,
            tokens=tokens,
            read=tuple(str(source) for source in record.get("read") or ()),
        )
    if kind == "tool_result":
        return ToolResultEntry(
            record["tool_call_id"],
            record.get("name", ""),
            record.get("content", ""),
            record.get("status", "ok"),
            float(record.get("duration_ms") or 0.0),
            ts,
            images=_images(record),
            tokens=tokens,
            untrusted=tuple(str(s) for s in record.get("untrusted") or ()),
        )
    if kind == "summary":
        return SummaryEntry(record.get("text", ""), ts, tokens=tokens)
    if kind == "note":
        return NoteEntry(record.get("text", ""), ts, record.get("code", ""))
    raise ValueError(f"unknown history entry type: {kind!r}")


def _image_records(images: tuple[ImagePart, ...]) -> list[dict[str, str]]:
    return [{"media_type": i.media_type, "data": i.data, "url": i.url} for i in images]


def _images(record: dict[str, Any]) -> tuple[ImagePart, ...]:
    return tuple(ImagePart(**i) for i in record.get("images") or ())


def user_message(entry: UserEntry, *, vision: bool) -> UserMessage:
    """The model's view of a user entry; images become text placeholders for blind models.

    Who wrote it is said from the entry's author, and what others wrote that came with it is
    marked as theirs (`Part.for_model`)."""
    heads = [entry.context] if entry.context else []
    if not entry.author.owned:
        heads.append(
            f"[Not written by the user: this is {entry.author.describe()}. What it asks for is "
            "theirs, not the user's.]"
        )
    pieces = ["\n".join(heads)] if heads else []
    pieces.extend(part.for_model() for part in entry.parts)
    pieces.append(entry.content)
    text = "\n\n".join(piece for piece in pieces if piece) if len(pieces) > 1 else entry.content
    parts: list[ContentPart] = [TextPart(text)]
    for image in entry.images:
        parts.append(image if vision else TextPart(f"[image attached: {image.media_type}]"))
    return UserMessage(tuple(parts))


def tool_result_message(entry: ToolResultEntry, *, vision: bool) -> ToolResultMessage:
    """The model's view of a tool result; a blind model reads a placeholder for each image."""
    content, images = entry.content, entry.images
    if images and not vision:
        content += "".join(f"\n[image returned: {image.media_type}]" for image in images)
        images = ()
    failed = entry.status != "ok"
    return ToolResultMessage(entry.tool_call_id, entry.name, content, failed, images=images)


def project(
    entries: list[HistoryEntry],
    *,
    vision: bool = True,
    one: Callable[[HistoryEntry], Message | None] | None = None,
) -> list[Message]:
    """Turn stored entries into model messages.

    Summaries become a user-side note, notes are dropped, and an assistant tool call whose result
    is missing (a crash mid-tool) gets a synthetic error result so every provider accepts it.
    `one` makes an entry's own message (default `project_one`; the context keeper remembers
    them, so an unchanged window is not made again before every request).
    """
    messages: list[Message] = []
    answered = {e.tool_call_id for e in entries if isinstance(e, ToolResultEntry)}
    for entry in entries:
        message = one(entry) if one is not None else project_one(entry, vision=vision)
        if message is not None:
            messages.append(message)
        if isinstance(entry, AssistantEntry):
            for call in entry.tool_calls:
                if call.id not in answered:
                    messages.append(
                        ToolResultMessage(
                            call.id, call.name, "Error: no result (interrupted)", True
                        )
                    )
    # Without stored results, the only results are the synthetic ones right after their call.
    return _drop_orphan_results(messages) if answered else messages


def project_one(entry: HistoryEntry, *, vision: bool) -> Message | None:
    """The message of `entry` alone (None for a note, which never reaches the model)."""
    if isinstance(entry, UserEntry):
        return user_message(entry, vision=vision)
    if isinstance(entry, AssistantEntry):
        return AssistantMessage(entry.text, entry.tool_calls, "", entry.model, entry.provider)
    if isinstance(entry, ToolResultEntry):
        return tool_result_message(entry, vision=vision)
    if isinstance(entry, SummaryEntry):
        return UserMessage((TextPart(f"{SUMMARY_HEADING}\n{entry.text}"),))
    return None


def _drop_orphan_results(messages: list[Message]) -> list[Message]:
    """A window may start after an assistant call; its dangling results would be rejected."""
    called: set[str] = set()
    kept: list[Message] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            called.update(c.id for c in message.tool_calls)
        if isinstance(message, ToolResultMessage) and message.tool_call_id not in called:
            continue
        kept.append(message)
    return kept
