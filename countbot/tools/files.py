"""The file tools: read_file, write_file, edit_file and list_dir, confined by a WorkspaceGuard.

Each call runs in one worker thread, so the event loop never blocks. The guard hands out file
descriptors, never paths: the file checked is the file read, written or listed. read_file reads
PDF, DOCX, XLSX and PPTX as their text (`countbot.media.documents`, converted in a child).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from countbot.media.documents import (
    MAX_DOCUMENT_BYTES,
    DocumentConverter,
    DocumentRefused,
    document_kind,
)
from countbot.tools.base import Egress, Tool, ToolContext, ToolResult
from countbot.tools.schema import integer, params, text
from countbot.tools.workspace_guard import PathRefused, WorkspaceGuard

# A whole-file read above this size must choose lines with offset/limit.
MAX_READ_BYTES = 5_000_000
MAX_LIST_ENTRIES = 500
_SNIFF_BYTES = 8192
_NEW_FILE_MODE = 0o644
_T = TypeVar("_T")


async def _in_thread(user_path: str, work: Callable[[], _T]) -> _T | ToolResult:
    """Runs blocking file work off the loop; expected failures become results the model reads."""
    try:
        return await asyncio.to_thread(work)
    except PathRefused as exc:
        return ToolResult.error(exc.reason)
    except FileNotFoundError:
        return ToolResult.error(f"{user_path!r} does not exist")
    except IsADirectoryError:
        return ToolResult.error(f"{user_path!r} is a directory; use list_dir to see its content")
    except NotADirectoryError:
        return ToolResult.error(f"{user_path!r}: part of the path is not a directory")
    except PermissionError:
        return ToolResult.error(f"permission denied for {user_path!r}")
    except OSError as exc:
        return ToolResult.error(f"{user_path!r}: {exc.strerror or exc}")


def _decode(data: bytes) -> str | None:
    """The UTF-8 text of `data`, or None when it is binary."""
    if b"\0" in data[:_SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _not_text(user_path: str) -> ToolResult:
    return ToolResult.error(f"{user_path!r} is a binary file; these tools only handle UTF-8 text")


def write_atomic(guard: WorkspaceGuard, user_path: str, text: str) -> Path:
    """Write through a temporary file and a rename inside the same folder, so readers never see
    half a file; both are made relative to the folder's descriptor, never by path."""
    with guard.parent(user_path) as (folder, name, real):
        try:
            mode = stat.S_IMODE(os.stat(name, dir_fd=folder).st_mode)
        except FileNotFoundError:
            mode = _NEW_FILE_MODE
        temp = f".{name}.{secrets.token_hex(6)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temp, flags, 0o600, dir_fd=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
                handle.flush()
                os.fchmod(handle.fileno(), mode)
                os.fsync(handle.fileno())
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=folder)
            raise
        return real


class _InWorkspace(Tool):
    """A file tool: every path it is given goes through the workspace guard."""

    def __init__(self, guard: WorkspaceGuard) -> None:
        self.guard = guard


class ReadFileTool(Tool):
    name = "read_file"
    description = (
        "Read a UTF-8 text file, or the text of a PDF, DOCX, XLSX or PPTX document. Paths are "
        "relative to the workspace. Use offset and limit to read a range of lines from a large "
        "file."
    )
    parameters = params(
        required={
            "path": text("File path, relative to the workspace."),
        },
        optional={
            "offset": integer("First line, from 1.", minimum=1),
            "limit": integer("How many lines to read.", minimum=1),
        },
    )
    idempotent = True
    brings = frozenset({"private"})

    def __init__(self, guard: WorkspaceGuard, documents: DocumentConverter | None = None) -> None:
        self.guard = guard
        self.documents = documents or DocumentConverter()

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = args["path"]
        offset, limit = args.get("offset", 1), args.get("limit")
        kind = document_kind(path, markup=False)
        if kind is not None and kind != "text":
            return await self._read_document(path, kind, offset, limit)
        if offset == 1 and limit is None:
            return await _in_thread(path, lambda: self._read_whole(path))
        return await _in_thread(path, lambda: self._read_lines(path, offset, limit))

    async def _read_document(
        self, user_path: str, kind: str, offset: int, limit: int | None
    ) -> ToolResult:
        """The document's text (the registry pages a long one), or the lines asked for."""
        data = await _in_thread(user_path, lambda: self._read_bytes(user_path))
        if isinstance(data, ToolResult):
            return data
        try:
            document = await self.documents.convert(data, kind)
        except DocumentRefused as exc:
            return ToolResult.error(f"{user_path!r} cannot be read: {exc}")
        empty = document.empty_reason()
        if empty is not None:
            return ToolResult(f"{user_path!r} has no text to read: {empty}.")
        if offset == 1 and limit is None:
            return ToolResult(document.text)
        lines = document.text.splitlines()
        chunk = lines[offset - 1 : None if limit is None else offset - 1 + limit]
        if not chunk:
            return ToolResult(f"(no lines from line {offset}; the text is shorter)")
        last = offset + len(chunk) - 1
        footer = f"continue with offset={last + 1}" if last < len(lines) else "end of text"
        return ToolResult("\n".join(chunk) + f"\n[lines {offset}-{last}; {footer}]")

    def _read_bytes(self, user_path: str) -> bytes | ToolResult:
        with self.guard.open_regular(user_path) as (handle, _):
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_DOCUMENT_BYTES:
                return ToolResult.error(f"{user_path!r} is {size:,} bytes, too large to convert")
            return handle.read()

    def _read_whole(self, user_path: str) -> ToolResult:
        with self.guard.open_regular(user_path) as (handle, _):
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_READ_BYTES:
                return ToolResult.error(
                    f"{user_path!r} is {size:,} bytes; read it in parts with offset and limit"
                )
            text = _decode(handle.read())
        if text is None:
            return _not_text(user_path)
        return ToolResult(text or "(empty file)")

    def _read_lines(self, user_path: str, offset: int, limit: int | None) -> ToolResult:
        with self.guard.open_regular(user_path) as (handle, _):
            if b"\0" in handle.read(_SNIFF_BYTES):
                return _not_text(user_path)
            handle.seek(0)
            stop = None if limit is None else offset - 1 + limit
            chunk = list(itertools.islice(handle, offset - 1, stop))
            more = limit is not None and handle.readline() != b""
        try:
            text = b"".join(chunk).decode("utf-8")
        except UnicodeDecodeError:
            return _not_text(user_path)
        if not chunk:
            return ToolResult(f"(no lines from line {offset}; the file is shorter)")
        last = offset + len(chunk) - 1
        footer = f"continue with offset={last + 1}" if more else "end of file"
        return ToolResult(f"{text}\n[lines {offset}-{last}; {footer}]")


class WriteFileTool(_InWorkspace):
    name = "write_file"
    description = (
        "Create or overwrite a text file with the given content; missing parent directories are "
        "created. Paths are relative to the workspace."
    )
    parameters = params(
        required={
            "path": text("File path, relative to the workspace."),
            "content": text("The complete new content."),
        },
    )

    async def egress(self, args: dict[str, Any], ctx: ToolContext) -> Egress | None:
        return standing_change(str(args.get("path", "")), str(args.get("content", "")))

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path, content = args["path"], args["content"]
        return await _in_thread(path, lambda: self._write(path, content))

    def _write(self, user_path: str, content: str) -> ToolResult:
        real = write_atomic(self.guard, user_path, content)
        size = len(content.encode("utf-8"))
        return ToolResult(f"Wrote {size:,} bytes to {self.guard.display(real)}")


class EditFileTool(_InWorkspace):
    name = "edit_file"
    description = (
        "Replace one exact piece of text in a file. old_text must appear exactly once, "
        "whitespace included; add surrounding lines to make it unique."
    )
    parameters = params(
        required={
            "path": text("File path, relative to the workspace."),
            "old_text": text("Exact text to find.", minLength=1),
            "new_text": text("Text to put in its place."),
        },
    )

    async def egress(self, args: dict[str, Any], ctx: ToolContext) -> Egress | None:
        return standing_change(str(args.get("path", "")), str(args.get("new_text", "")))

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = args["path"]
        return await _in_thread(path, lambda: self._edit(path, args["old_text"], args["new_text"]))

    def _edit(self, user_path: str, old: str, new: str) -> ToolResult:
        with self.guard.open_regular(user_path) as (handle, _):
            text = _decode(handle.read())
        if text is None:
            return _not_text(user_path)
        count = text.count(old)
        if count == 0:
            return ToolResult.error(
                f"old_text was not found in {user_path!r}. Read the file and copy the text "
                "exactly, including whitespace and line breaks."
            )
        if count > 1:
            return ToolResult.error(
                f"old_text matches {count} places in {user_path!r}. Include more surrounding "
                "lines so it matches exactly once."
            )
        real = write_atomic(self.guard, user_path, text.replace(old, new, 1))
        return ToolResult(f"Edited {self.guard.display(real)}: replaced 1 occurrence")


class ListDirTool(_InWorkspace):
    name = "list_dir"
    description = (
        "List a directory; subdirectories end with '/'. Paths are relative to the workspace "
        "(default: the workspace itself)."
    )
    parameters = params(
        optional={
            "path": text("Directory, relative to the workspace."),
        },
    )
    idempotent = True
    brings = frozenset({"private"})

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = args.get("path", ".")
        return await _in_thread(path, lambda: self._list(path))

    def _list(self, user_path: str) -> ToolResult:
        with self.guard.open(user_path, os.O_RDONLY | os.O_DIRECTORY) as (fd, real):
            with os.scandir(fd) as scan:  # scandir reads through its own dup of fd
                entries = sorted(scan, key=lambda e: e.name)
            if not entries:
                return ToolResult(f"{self.guard.display(real)} is empty")
            names = [self._line(real, fd, e) for e in entries[:MAX_LIST_ENTRIES]]
        hidden = len(entries) - len(names)
        if hidden:
            names.append(f"... and {hidden} more (showing the first {MAX_LIST_ENTRIES})")
        return ToolResult("\n".join(names))

    def _line(self, folder: Path, folder_fd: int, entry: os.DirEntry[str]) -> str:
        """One entry; a symlink shows its target, and a broken one says why instead of failing."""
        if not entry.is_symlink():
            return entry.name + ("/" if entry.is_dir(follow_symlinks=False) else "")
        try:
            target = os.readlink(entry.name, dir_fd=folder_fd)
        except OSError:
            return f"{entry.name} -> ? (broken: cannot read the link)"
        is_dir, problem = self.guard.link_note(folder, entry.name)
        note = f" ({problem})" if problem else ""
        return f"{entry.name}{'/' if is_dir else ''} -> {target}{note}"


# Workspace files later turns follow as the user's instructions: the system prompt's, the
# heartbeat's tasks, memory and skills.
_STANDING_FILES = frozenset({"agents.md", "user.md", "heartbeat.md", "memory.md"})


def standing_change(path: str, text: str) -> Egress | None:
    """A write that changes what later turns follow as instructions (see `Egress`), else None."""
    parts = [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]
    if not parts:
        return None
    if (len(parts) == 1 and parts[0].lower() in _STANDING_FILES) or parts[0].lower() == "skills":
        return Egress("standing", "/".join(parts), text, opaque=True)
    return None
