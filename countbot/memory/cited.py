"""A memory search hit with its citation, and the port through which tools and the agent search.

The index itself (SQLite, embeddings) lives in `countbot/memory_index/`; this module is what the
layers below may know of it, so `memory_search` and auto-recall need no SQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

from countbot.common.authorship import OWNER, Author

# What a search can be narrowed to.
KINDS = ("note", "conversation")
# The kinds each scope a person can name covers (the Memory page, `countbot memory search`).
SCOPES: dict[str, tuple[str, ...]] = {
    "all": KINDS,
    "notes": ("note",),
    "conversations": ("conversation",),
}


@dataclass(frozen=True, slots=True)
class CitedHit:
    """One entry found: its text and where and when it was written."""

    text: str
    kind: str  # "note" or "conversation"
    source: str  # a file relative to the workspace, or a session id
    locator: str  # "L12-14" or "m<message id>"
    ts: float
    score: float
    heading: str = ""
    session_id: str | None = None
    channel: str | None = None
    title: str = ""
    # How it was found: its rank among full-text matches, its cosine to the query (if either).
    text_rank: int | None = None
    similarity: float | None = None
    # Who wrote it (`countbot/common/authorship.py`): the memory files and the owner's messages are
    # the owner's; a forward, a stranger's message, a subagent's report (and the answers to
    # them) are not.
    author: Author = OWNER
    # Found by meaning by the index's second reader, which put it alone at its top when the
    # first was unsure (auto-recall's second opinion: `memory_index/models.py`).
    singled_out: bool = False

    def written_by(self, now: float) -> str:
        """Who wrote it and when, as a label: "a message forwarded on telegram, 3 days ago"."""
        days = int(max(0.0, now - self.ts) // 86400)
        ago = "today" if days == 0 else "1 day ago" if days == 1 else f"{days} days ago"
        return f"{self.author.describe()}, {ago}"

    @property
    def day(self) -> str:
        return datetime.fromtimestamp(self.ts).date().isoformat() if self.ts else "undated"

    def citation(self) -> str:
        """`2026-05-01 · MEMORY.md L12` or `2026-05-01 · conversation on telegram (session x)`."""
        if self.kind == "conversation":
            where = f"conversation on {self.channel}" if self.channel else "conversation"
            return f"{self.day} · {where} (session {self.session_id}, {self.locator})"
        return f"{self.day} · {self.source} {self.locator}"

    def as_dict(self) -> dict[str, object]:
        return {
            "text": self.text,
            "kind": self.kind,
            "source": self.source,
            "locator": self.locator,
            "date": self.day,
            "ts": self.ts,
            "score": round(self.score, 5),
            "heading": self.heading,
            "session_id": self.session_id,
            "channel": self.channel,
            "title": self.title,
            "citation": self.citation(),
            "text_rank": self.text_rank,
            "similarity": None if self.similarity is None else round(self.similarity, 3),
            "author": self.author.record(),
            # Set only for what the owner did not write, for surfaces that label it.
            "written_by": None if self.author.owned else self.author.describe(),
        }


class MemorySearch(Protocol):
    """Search everything written down; hits best first."""

    async def search(
        self,
        query: str,
        *,
        limit: int = 10,
        kinds: tuple[str, ...] = KINDS,
        since: date | None = None,
        until: date | None = None,
        exclude_session: str | None = None,
        owner_only: bool = False,
    ) -> list[CitedHit]: ...

    async def forget(self, text: str) -> int:
        """Stop finding conversation entries that hold `text`; returns how many were dropped."""
        ...
