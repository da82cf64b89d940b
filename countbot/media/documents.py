"""Documents to text: PDF, DOCX, XLSX, PPTX and HTML through markitdown (MIT) in a child process,
plain text formats decoded here.

This module imports nothing of ours outside `countbot.media`, so `read_file` in the tools layer
uses it as it is. markitdown (the `documents` extra) is imported only by the child.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import PurePath

from countbot.media.child import JobFailed, run_job

MAX_DOCUMENT_BYTES = 50 * 1024 * 1024
CONVERT_TIMEOUT = 180.0
# Formats that need converting, by file suffix; read_file leaves HTML as the text it is.
CONVERTED = {".pdf": "pdf", ".docx": "docx", ".xlsx": "xlsx", ".pptx": "pptx"}
MARKUP = {".html": "html", ".htm": "html", ".xhtml": "html"}
_BY_MEDIA_TYPE = {
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "text/html": "html",
}
PLAIN_SUFFIXES = frozenset(
    {".txt", ".md", ".markdown", ".csv", ".tsv", ".json", ".yaml", ".yml", ".xml", ".log"}
    | {".ini", ".toml", ".rst", ".py", ".js", ".ts", ".sh", ".sql", ".srt", ".vtt"}
)


class DocumentRefused(Exception):
    """This document cannot be read; the message tells the user why."""


@dataclass(frozen=True, slots=True)
class Document:
    """A document's text; `kind` is its format ("pdf", "docx", ..., "text")."""

    kind: str
    text: str

    def empty_reason(self) -> str | None:
        """Why there is no text, when there is none (a scan has no text layer)."""
        if self.text.strip():
            return None
        if self.kind == "pdf":
            return (
                "it has no text layer: it is a scan or pictures of pages, and this assistant "
                "reads no text from pictures of a PDF"
            )
        return "it contains no text"


def document_kind(name: str, media_type: str = "", *, markup: bool = True) -> str | None:
    """The format of a file to convert ("pdf", "docx", ...), "text" for plain text, or None."""
    suffix = PurePath(name).suffix.lower()
    known = {**CONVERTED, **MARKUP} if markup else CONVERTED
    if suffix in known:
        return known[suffix]
    by_type = _BY_MEDIA_TYPE.get(media_type.split(";")[0].strip().lower())
    if by_type is not None and (markup or by_type != "html"):
        return by_type
    if suffix in PLAIN_SUFFIXES or media_type.startswith("text/"):
        return "text"
    return None


class DocumentConverter:
    """Converts documents, one at a time (each conversion takes a core for its duration)."""

    def __init__(self, *, timeout: float = CONVERT_TIMEOUT, concurrency: int = 1) -> None:
        self._timeout = timeout
        self._slots = asyncio.Semaphore(concurrency)

    async def convert(self, data: bytes, kind: str) -> Document:
        """The text of `data` in format `kind`; raises `DocumentRefused` with the reason."""
        if len(data) > MAX_DOCUMENT_BYTES:
            limit = MAX_DOCUMENT_BYTES // (1024 * 1024)
            raise DocumentRefused(f"it is larger than the {limit} MB a document may have")
        if kind == "text":
            return Document(kind, _plain_text(data))
        async with self._slots:
            try:
                out = await run_job("document", data, kind, time_limit=self._timeout)
            except JobFailed as exc:
                raise DocumentRefused(str(exc)) from None
        return Document(kind, out.decode("utf-8", "replace"))


def _plain_text(data: bytes) -> str:
    """UTF-8 (with or without a BOM) or UTF-16 with a BOM; anything else is not text."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    if b"\0" in data[:8192]:
        raise DocumentRefused("it is a binary file, not text")
    return data.decode("utf-8-sig", "replace")
