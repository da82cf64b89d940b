"""The one entry point for received files: what a voice note or a document says, as text for the
turn. The channels' shared intake and the web upload call `MediaReader.read`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import PurePath

from countbot.config.settings import TranscriptionSettings
from countbot.media.audio import AudioRefused, is_audio, to_pcm
from countbot.media.documents import DocumentConverter, DocumentRefused, document_kind
from countbot.media.transcription import (
    EndpointRecognizer,
    OfflineRecognizer,
    Recognizer,
    TranscriptionFailed,
)

log = logging.getLogger(__name__)

# How much of a document enters the turn itself; the rest is read with read_file.
INLINE_CHARS = 20_000
# Saves a document's whole text beside the original; returns where (workspace-relative).
SaveText = Callable[[str], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Reading:
    """What a received file says: `note` is the line about it for the model (where it is saved,
    how long a voice note is, why it cannot be read), `text` what it says (a document's text,
    the words heard in a voice note), `kind` is "voice" or "document". Who wrote `text` is for
    the caller to say: it knows who sent the file."""

    kind: str
    note: str
    text: str = ""

    @property
    def transcript(self) -> str | None:
        """The words heard in a voice note (for surfaces that show them)."""
        return self.text if self.kind == "voice" and self.text else None


def recognizer_for(settings: TranscriptionSettings) -> Recognizer:
    """The configured endpoint, else the offline recognizer."""
    if settings.api_base:
        key = settings.api_key.get_secret_value() if settings.api_key else None
        return EndpointRecognizer(
            settings.api_base,
            key,
            settings.model,
            language=settings.language,
            timeout=settings.timeout,
        )
    return OfflineRecognizer(settings.timeout)


class MediaReader:
    """Transcribes voice notes and converts documents (one heavy job at a time: 2 cores serve
    the daemon, the model's tools and this)."""

    def __init__(
        self,
        settings: TranscriptionSettings,
        documents: DocumentConverter | None = None,
        recognizer: Recognizer | None = None,
    ) -> None:
        self._settings = settings
        self._documents = documents or DocumentConverter()
        self._recognizer = recognizer or recognizer_for(settings)
        self._slot = asyncio.Semaphore(1)

    @staticmethod
    def reads(head: bytes, name: str, media_type: str, kind: str) -> bool:
        """Whether `read` has something to say about such a file (from its first 16 bytes)."""
        return is_audio(name, media_type, kind, head) or document_kind(name, media_type) is not None

    async def read(
        self, data: bytes, *, name: str, media_type: str, kind: str, where: str, save: SaveText
    ) -> Reading | None:
        """What the file saved at `where` says, or None when it is neither sound nor document."""
        if is_audio(name, media_type, kind, data[:16]):
            return await self._voice(data, where)
        doc_kind = document_kind(name, media_type)
        if doc_kind is None:
            return None
        return await self._document(data, doc_kind, name, where, save)

    async def _voice(self, data: bytes, where: str) -> Reading:
        settings = self._settings
        if not settings.enabled:
            return Reading("voice", _unheard(where, "transcription is turned off in the settings"))
        if len(data) > settings.max_bytes:
            limit = f"it is larger than the {settings.max_bytes:,} bytes a voice note may have"
            return Reading("voice", _unheard(where, limit))
        try:
            async with self._slot:
                pcm = await to_pcm(
                    data, max_seconds=settings.max_seconds, time_limit=settings.timeout
                )
                words = await self._recognizer.transcribe(pcm)
        except (AudioRefused, TranscriptionFailed) as exc:
            log.info("a voice note (%s) was not transcribed: %s", where, exc)
            return Reading("voice", _unheard(where, str(exc)))
        if not words:
            return Reading("voice", _unheard(where, "no words were recognized in it"))
        label = self._recognizer.label
        note = (
            f"[Transcript of a voice note ({pcm.seconds:.0f} s, by {label}; the recording is "
            f"{where}):]"
        )
        return Reading("voice", note, words)

    async def _document(
        self, data: bytes, kind: str, name: str, where: str, save: SaveText
    ) -> Reading:
        shown = PurePath(name).name
        try:
            async with self._slot:
                document = await self._documents.convert(data, kind)
        except DocumentRefused as exc:
            note = f"[The user sent {shown!r} ({where}), but it cannot be read: {exc}.]"
            return Reading("document", note)
        empty = document.empty_reason()
        if empty is not None:
            return Reading("document", f"[The user sent {shown!r} ({where}): {empty}.]")
        text = document.text
        if len(text) <= INLINE_CHARS:
            head = f"[The user sent {shown!r} ({where}); its text follows.]"
            return Reading("document", head, text)
        full = where if kind == "text" else await save(text)  # a text file is its own text
        head = (
            f"[The user sent {shown!r} ({where}); the first {INLINE_CHARS:,} of {len(text):,} "
            f"characters of its text follow. The whole text is in {full}: read on with read_file "
            "and offset/limit.]"
        )
        return Reading("document", head, text[:INLINE_CHARS] + "\n[cut off here]")


def _unheard(where: str, reason: str) -> str:
    return (
        f"[The user sent a voice note ({where}), but it could not be transcribed: {reason}. "
        "You cannot hear it; say so if they expect you to.]"
    )
