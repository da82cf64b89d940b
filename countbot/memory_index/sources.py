"""What the index holds: entries cut from the memory files and from stored conversations.

An entry is one paragraph or list item of a Markdown file (with the date of the heading it sits
under), or the text of one user or assistant message (with its session, channel and time). Each
carries what a citation needs, so a hit can say where and when it was written, and who wrote it:
a message's author as stored with it (`countbot/common/authorship.py`); an answer's is the author of
the message it answers (it may repeat what a stranger asked), or, when its turn had read
untrusted content (a page, a document, a forward), an answer marked with what it read;
everything in a subagent's own session is the subagent's; the memory files are the owner's.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from stat import S_ISDIR
from typing import Any

from countbot.common.authorship import OWNER, Author
from countbot.memory.search import split_entries

# The files of long-term memory, relative to the workspace; dated notes live in memory/*.md.
MEMORY_FILES = ("MEMORY.md", "USER.md")
NOTES_FOLDER = "memory"
# The channel of a subagent's own session (`countbot/subagents/`).
SUBAGENT_CHANNEL = "subagent"
# Longer messages are cut into pieces of about this many characters, each an entry.
CHUNK_CHARS = 1200
# An answer's untrusted sources named in its author (the rest counted), and their length.
_SOURCES_NAMED = 3
_SOURCE_CHARS = 160

_SPEAKER_OR_MARK = re.compile(r"^(?:User: |Message: |Assistant: |\s*(?:[-*+]|\d+[.)])\s+)")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Entry:
    """One searchable piece of memory and its citation."""

    kind: str  # "note" (memory files) or "conversation"
    source: str  # the file (relative to the workspace) or the session id
    locator: str  # "L12-14" in a file, "m<id>" in a conversation
    ts: float  # when it was written (the heading's date for a note)
    text: str
    heading: str = ""
    session_id: str | None = None
    channel: str | None = None
    title: str = ""
    author: Author = OWNER

    @property
    def digest(self) -> str:
        """Identity of the content, so re-reading an unchanged file keeps its entries."""
        key = f"{self.source}\0{self.heading}\0{self.text}"
        return hashlib.sha1(key.encode()).hexdigest()[:16]


_NOT_SPACE = re.compile(r"\S")


class MemoryPaths:
    """The files the index reads: MEMORY.md, USER.md and memory/*.md. Looked at before every
    auto-recall, so the notes folder is listed again only when its mtime moved (a file added,
    removed or renamed moves it); a folder changed in the last `RECENT_NS` is listed every time
    (its mtime is as coarse as the kernel's clock tick: a second change in the same tick would
    not move it), as the skills' PATH lookup and git's racy check do."""

    RECENT_NS = 2_000_000_000

    def __init__(self, workspace: Path) -> None:
        self._fixed = frozenset(workspace / name for name in MEMORY_FILES)
        self._folder = workspace / NOTES_FOLDER
        self._listed: tuple[int, frozenset[Path]] | None = None  # folder mtime, its notes

    def now(self) -> frozenset[Path]:
        """The paths as they are on disk now; blocking (a stat, a listing if moved)."""
        try:
            stat = os.stat(self._folder)
        except OSError:
            return self._fixed
        if not S_ISDIR(stat.st_mode):
            return self._fixed
        mtime = stat.st_mtime_ns
        if self._listed is None or self._listed[0] != mtime:
            notes = self._fixed | frozenset(self._folder.glob("*.md"))
            trusted = mtime < time.time_ns() - self.RECENT_NS
            self._listed = (mtime, notes) if trusted else None
            return notes
        return self._listed[1]


def file_entries(relative: str, content: str, mtime: float) -> list[Entry]:
    """The entries of one Markdown file; headings only date and title what is under them."""
    content = _HTML_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), content)
    file_day = _day(relative)
    entries = []
    for start, lines, heading in split_entries(content.splitlines()):
        text = "\n".join(lines).strip()
        if not text or text.startswith("#"):
            continue
        when = _day(heading) or file_day or mtime
        locator = f"L{start}" if len(lines) == 1 else f"L{start}-{start + len(lines) - 1}"
        entries.append(Entry("note", relative, locator, when, text, heading.lstrip("# ").strip()))
    return entries


def message_entries(
    message_id: int,
    session_id: str,
    channel: str | None,
    title: str,
    record: dict[str, Any],
    answering: dict[str, Any] | None = None,
    after_tools: bool = False,
) -> list[Entry]:
    """The entries of one stored user or assistant record (none for an empty one); `answering`
    is the stored author of the message an assistant record answers, `after_tools` whether
    tool results came before it in its turn (read only for a record without `read`)."""
    kind = record.get("type")
    text = record.get("content") if kind == "user" else record.get("text")
    if not isinstance(text, str) or not text.strip():
        return []
    if kind == "assistant" and record.get("stop_reason") == "cancelled":
        return []  # the user stopped it: an answer they rejected is never recalled
    ts = float(record.get("ts") or 0.0)
    author = Author.from_record(record.get("author") if kind == "user" else answering)
    if kind == "assistant":
        author = _answer_author(record, author, after_tools)
    if channel == SUBAGENT_CHANNEL:  # its task and its work: its words and what it read
        author = Author("subagent", session_id.rpartition(":")[2])
    speaker = "Assistant" if kind != "user" else "User" if author.owned else "Message"
    return [
        Entry(
            "conversation",
            session_id,
            f"m{message_id}" + (f".{index}" if index else ""),
            ts,
            f"{speaker}: {piece}",
            session_id=session_id,
            channel=channel,
            title=title,
            author=author,
        )
        for index, piece in enumerate(_chunks(text.strip()))
    ]


def _answer_author(record: dict[str, Any], answering: Author, after_tools: bool) -> Author:
    """Who an answer counts as written by: the turn's ledger said what untrusted content it
    had read when it was stored (`read`); an answer stored before that was kept counts as
    having read what its turn's tools brought (fail closed: which of them brought untrusted
    text was not recorded)."""
    read = record.get("read")
    if isinstance(read, list):
        sources = [str(source) for source in read if source]
    else:
        sources = ["its turn's tool results"] if after_tools else []
    if not sources:
        return answering
    named = ", ".join(sources[:_SOURCES_NAMED])
    more = f" and {len(sources) - _SOURCES_NAMED} more" if len(sources) > _SOURCES_NAMED else ""
    return Author("answer", f"{named[:_SOURCE_CHARS]}{more}", answering.via)


def meaning_text(text: str) -> str:
    """An entry's text without its speaker or list marker: what its vector should stand for."""
    return _SPEAKER_OR_MARK.sub("", text, count=1)


def _chunks(text: str) -> list[str]:
    """`text` in pieces of about CHUNK_CHARS, cut at a paragraph or line break when possible.

    Positions move through the text instead of slicing off its rest each time: that copy made a
    pasted megabyte quadratic.
    """
    pieces = []
    start = 0
    while len(text) - start > CHUNK_CHARS:
        end = start + CHUNK_CHARS
        cut = max(text.rfind("\n", start, end), text.rfind(" ", start, end))
        cut = cut if cut > start + CHUNK_CHARS // 2 else end
        pieces.append(text[start:cut].strip())
        following = _NOT_SPACE.search(text, cut)
        start = following.start() if following else len(text)
    pieces.append(text[start:].strip())
    return [piece for piece in pieces if piece]


def _day(text: str) -> float | None:
    """Noon of the first YYYY-MM-DD in `text` as a timestamp (local time), or None."""
    match = _DATE.search(text)
    if match is None:
        return None
    try:
        return datetime(*map(int, match.groups()), 12).timestamp()
    except ValueError:
        return None
