"""The manifest a backup ends with: every file's hash and size, and what the archive left out."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

FORMAT = "countbot-backup"
VERSION = 1


@dataclass(slots=True)
class Manifest:
    """What `countbot backup create` wrote; `verify` and `restore` hold the archive to it."""

    created_at: str
    countbot: str
    # The store's schema version (`PRAGMA user_version`) when it was copied.
    schema: int = 0
    # Archive path -> {"sha256": hex, "size": bytes}.
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Archive path -> target, for symbolic links inside the workspace.
    links: dict[str, str] = field(default_factory=dict)
    secrets_included: bool = False
    # Secret settings left out, by dotted key: typed again after a restore.
    secrets_left_out: list[str] = field(default_factory=list)
    # Pulled local models, named with their size: the weights are pulled again, not archived.
    local_models: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> bytes:
        data = {"format": FORMAT, "version": VERSION}
        data.update({name: getattr(self, name) for name in self.__slots__})  # type: ignore[attr-defined]
        return json.dumps(data, indent=1, ensure_ascii=False).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> Manifest:
        """The manifest in `raw`; ValueError when it is not one this version reads."""
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"the manifest is not JSON ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("the manifest is not a CountBot backup's")
        if data.get("version") != VERSION:
            raise ValueError(f"the manifest's format version {data.get('version')} is unknown")
        try:
            fields = {name: data[name] for name in cls.__slots__ if name in data}  # type: ignore[attr-defined]
            manifest = cls(**fields)
        except TypeError as exc:
            raise ValueError(f"the manifest is incomplete ({exc})") from None
        if not isinstance(manifest.files, dict) or not isinstance(manifest.links, dict):
            raise ValueError("the manifest's file list is malformed")
        return manifest


class Hasher:
    """A sha256 and byte count fed as a file's bytes go by."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.size = 0

    def update(self, chunk: bytes) -> None:
        self._hash.update(chunk)
        self.size += len(chunk)

    def entry(self) -> dict[str, Any]:
        return {"sha256": self._hash.hexdigest(), "size": self.size}
