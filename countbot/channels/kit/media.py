"""Where files people send through a channel land: `<workspace>/media/` of the agent the message
goes to (`HouseMedia`), where that agent's file tools can read them later and no other agent's
can.

A platform hands its messages in with their attachments unfetched (`with_attachments`); the intake
fetches and saves them (`taken_in`) only once it has let the message through to a turn (not a
repeat, a known sender, within the flood limit, not a command), so a stranger's file is never
downloaded. `take_in` saves a file and, for a voice note or a document, leaves a placeholder note
that `MediaFolder.read_notes` takes out of the text and turns into a part of the message
(`countbot/common/authorship.py`): a voice note's words are its sender's, a document's text is its
unknown author's, never the words of whoever sent it."""

from __future__ import annotations

import asyncio
import base64
import itertools
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import aiofiles
import aiofiles.os

from countbot.channels.kit.base import Attachment, Incoming
from countbot.common.authorship import Author, Part, PartKind
from countbot.llm.types import ImagePart
from countbot.media.reader import MediaReader, Reading

log = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
# Images a vision model is shown inline (others are stored and described).
INLINE_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})
# Placeholders kept for `read_notes`: far more than one message carries.
MAX_UNREAD = 64
# Characters of a stored name after its time stamp (names are ASCII once made harmless).
MAX_NAME = 160
_MAGIC = {b"\x89PNG": "image/png", b"\xff\xd8\xff": "image/jpeg", b"GIF8": "image/gif"}


@dataclass(frozen=True, slots=True)
class _Unread:
    """A saved voice note or document whose placeholder `note` awaits `read_notes`."""

    path: Path
    stored_name: str
    name: str
    media_type: str
    kind: str
    note: str


class MediaFolder:
    """Saves received files under unique, harmless names; reads voice notes and documents."""

    def __init__(self, workspace: Path, reader: MediaReader | None = None) -> None:
        self.workspace = workspace
        self.root = workspace / "media"
        self.reader = reader
        # Placeholders not yet read, oldest first (a refused message's are dropped in time).
        self._unread: OrderedDict[str, _Unread] = OrderedDict()

    def read_later(self, item: _Unread) -> None:
        self._unread[item.note] = item
        while len(self._unread) > MAX_UNREAD:
            self._unread.popitem(last=False)

    async def read_notes(self, text: str, sender: Author) -> tuple[str, list[Part]]:
        """`text` without the placeholders of saved voice notes and documents, and what each
        says as a part of the message: a voice note's words are `sender`'s, a document's text
        is its own author's."""
        parts: list[Part] = []
        for note in [note for note in self._unread if note in text]:
            item = self._unread.pop(note)
            reading = await self._read(item)
            if reading is not None:
                text = text.replace(note, "").strip()
                parts.append(self._part(item, reading, sender))
        return text, parts

    async def read_saved(self, shown: str, name: str, kind: str, sender: Author) -> Part:
        """A file saved here before (`shown`: its workspace-relative path, as `shown` gave it)
        as a part of a message, read now; raises ValueError for a path outside this folder or a
        file that is not there."""
        path = await asyncio.to_thread(self._received, shown)
        item = _Unread(path, path.name, name, "", kind, "")
        reading = await self._read(item) if self.reader is not None else None
        if reading is None:  # neither voice nor document: the model reads it with its tools
            note = f"[The user sent a file {name!r}, saved as {shown}; read it if needed.]"
            return Part("file", "", Author("document", name), note, shown, name)
        return self._part(item, reading, sender)

    def _received(self, shown: str) -> Path:
        """The file `shown` names, if it is one saved in this folder; blocking (it resolves)."""
        path = (self.workspace / shown).resolve()
        if not path.is_relative_to(self.root.resolve()) or not path.is_file():
            raise ValueError(f"{shown} is not a file received before")
        return path

    def _part(self, item: _Unread, reading: Reading, sender: Author) -> Part:
        author = sender if reading.kind == "voice" else Author("document", item.name)
        kind: PartKind = "voice" if reading.kind == "voice" else "document"
        return Part(kind, reading.text, author, reading.note, self.shown(item.path), item.name)

    async def _read(self, item: _Unread) -> Reading | None:
        assert self.reader is not None
        try:
            async with aiofiles.open(item.path, "rb") as handle:
                data = await handle.read()
        except OSError as exc:
            log.warning("a received file vanished before it was read: %s", exc)
            return None

        async def save_text(text: str) -> str:
            return self.shown(await self.save(f"{item.stored_name}.md", text.encode()))

        return await self.reader.read(
            data,
            name=item.name,
            media_type=item.media_type,
            kind=item.kind,
            where=self.shown(item.path),
            save=save_text,
        )

    async def save(self, name: str, data: bytes) -> Path:
        """Write `data` as a new file named after `name` and return its path."""
        await aiofiles.os.makedirs(self.root, exist_ok=True)
        safe = _UNSAFE.sub("_", Path(name).name).strip("._") or "file"
        if len(safe) > MAX_NAME:  # a file system takes 255 bytes: keep the start and the type
            safe = f"{safe[: MAX_NAME - 41]}_{safe[-40:]}"
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for attempt in itertools.count():
            path = self.root / (f"{stamp}-{safe}" if not attempt else f"{stamp}-{attempt}-{safe}")
            try:
                async with aiofiles.open(path, "xb") as handle:
                    await handle.write(data)
            except FileExistsError:
                continue
            return path
        raise AssertionError("unreachable: the counter never ends")

    def shown(self, path: Path) -> str:
        """How the model should name the file: relative to the workspace."""
        return path.relative_to(self.workspace).as_posix()


class HouseMedia:
    """Each agent's `MediaFolder`, made at its first file: a file sent to one agent's chat is
    saved in that agent's own workspace, never where another agent's tools could read it."""

    def __init__(self, workspace: Callable[[str], Path], reader: MediaReader | None) -> None:
        self._workspace = workspace
        self._reader = reader
        self._folders: dict[str, MediaFolder] = {}

    def of(self, agent: str) -> MediaFolder:
        """Agent `agent`'s folder (made anew when its workspace moved in the config)."""
        workspace = self._workspace(agent)
        folder = self._folders.get(agent)
        if folder is None or folder.workspace != workspace:
            folder = self._folders[agent] = MediaFolder(workspace, self._reader)
        return folder


def inline_image(data: bytes, media_type: str) -> ImagePart:
    return ImagePart(media_type=media_type, data=base64.b64encode(data).decode("ascii"))


async def take_in(
    media: MediaFolder, stored_name: str, data: bytes, *, name: str, media_type: str, kind: str
) -> tuple[list[ImagePart], list[str]]:
    """Save a received file; returns what the model gets: the image inline, or a note where the
    file is so its file tools can read it (for a voice note or a document, a placeholder that
    `MediaFolder.read_notes` replaces with what it says)."""
    saved = await media.save(stored_name, data)
    where = media.shown(saved)
    if kind in ("photo", "image") or media_type in INLINE_IMAGE_TYPES:
        return [inline_image(data, media_type)], [f"[Image saved as {where}]"]
    size = f"{len(data) / 1024:.0f} KB"
    note = (
        f"[The user sent a {kind} {name!r} ({media_type}, {size}), saved as "
        f"{where}; read it with your file tools if needed.]"
    )
    if media.reader is not None and media.reader.reads(data[:16], name, media_type, kind):
        media.read_later(_Unread(saved, stored_name, name, media_type, kind, note))
    return [], [note]


def sniff_image_type(data: bytes) -> str:
    """A picture's media type from its first bytes (platforms that send pictures without one)."""
    for magic, media_type in _MAGIC.items():
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "image/jpeg"


async def take_in_all(
    media: MediaFolder, prefix: str, attachments: Sequence[Attachment]
) -> tuple[list[ImagePart], list[str]]:
    """Fetch and save every attachment (`take_in`); one that cannot be fetched becomes a note."""
    images: list[ImagePart] = []
    notes: list[str] = []
    for index, item in enumerate(attachments):
        try:
            data = await item.fetch()
        except item.failures as exc:
            log.warning("downloading a %s (%s) failed: %s", item.kind, prefix, exc)
            notes.append(f"[The user sent a {item.kind}, but downloading it failed: {exc}]")
            continue
        media_type = (
            sniff_image_type(data)
            if item.kind == "image"
            else item.media_type or "application/octet-stream"
        )
        more_images, more_notes = await take_in(
            media,
            f"{prefix}-{index}-{item.name}",
            data,
            name=item.name,
            media_type=media_type,
            kind=item.kind,
        )
        images += more_images
        notes += more_notes
    return images, notes


def with_attachments(draft: Incoming, attachments: Sequence[Attachment]) -> Incoming | None:
    """`draft` (the text as the user wrote it) carrying its attachments, still unfetched (the
    intake takes them in, `taken_in`, once it lets the message through). None when there is
    nothing to answer (no text, no image, no attachment)."""
    if not draft.text and not draft.images and not attachments:
        return None
    return replace(draft, attachments=(*draft.attachments, *attachments))


async def taken_in(message: Incoming, media: MediaFolder, prefix: str) -> Incoming:
    """`message` with its attachments fetched and saved (`take_in_all`): images inline, a note
    for each other file after the text."""
    if not message.attachments:
        return message
    images, notes = await take_in_all(media, prefix, message.attachments)
    text = "\n\n".join(part for part in (message.text, *notes) if part)
    return replace(message, text=text, images=(*message.images, *images), attachments=())


def kind_of(media_type: str) -> str:
    """An attachment's kind from its MIME type: "image" (shown to vision models), "audio"
    (transcribed) or "file"."""
    return next((k for k in ("image", "audio") if media_type.startswith(f"{k}/")), "file")
