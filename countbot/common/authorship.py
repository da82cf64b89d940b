"""Who wrote each piece of a message: decided where the text enters, stored with it.

A user record is the message's own text (`content`), written by its `author`, and the `parts`
that came with it (an attached document's text, a voice note's transcript, a loaded skill's
body, the recalled memory block), each with its own author. A surface decides the author from
the platform's own facts (a forward, a sender only the open door let in, a mail the server did
not vouch for, a subagent's report, a scheduled job); nothing ever reads it from the text. The
turn's data-flow ledger (`Messages`) counts every piece the owner did not write as untrusted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

# owner: the owner's typed or spoken words; job: the prompt of a job the owner scheduled (its
# words are the owner's standing request); answer: the assistant's answer in a turn that had
# read untrusted content (it may repeat what it read). Every other kind is someone else's text.
AuthorKind = Literal[
    "owner",
    "job",
    "forward",
    "member",
    "mail",
    "subagent",
    "document",
    "skill",
    "trigger",
    "answer",
    "other",
]
PartKind = Literal["document", "voice", "file", "skill", "recall", "payload"]
_OWNED = frozenset({"owner", "job"})


@dataclass(frozen=True, slots=True)
class Author:
    """Who wrote a piece of text: a kind, who it is in a reader's words, and where it came in."""

    kind: AuthorKind = "owner"
    who: str = ""
    via: str = ""  # the channel it arrived on

    @property
    def owned(self) -> bool:
        """Whether the text is the owner's own request (typed, spoken or scheduled)."""
        return self.kind in _OWNED

    def describe(self) -> str:
        """What the text is, as a label for the ledger, the audit and citations."""
        on = f" on {self.via}" if self.via else ""
        who = f" ({self.who})" if self.who else ""
        labels = {
            "owner": f"the user's own message{on}",
            "job": f"the prompt of scheduled job {self.who}".rstrip(),
            "forward": f"a message forwarded{on}{who}",
            "member": f"a message from a group member{on}{who}",
            "mail": f"a mail not vouched for{who}",
            "subagent": f"the report of subagent {self.who}".rstrip(),
            "document": f"document {self.who}".rstrip(),
            "skill": f"workspace skill {self.who}".rstrip(),
            "trigger": f"what trigger {self.who} received".replace("  ", " "),
            "answer": f"an answer written after reading {self.who or 'untrusted content'}",
        }
        return labels.get(self.kind, f"a message the user did not write{on}{who}")

    def record(self) -> dict[str, str]:
        """The JSON form stored with a record (empty fields left out)."""
        return {key: value for key, value in self._fields() if value}

    def _fields(self) -> tuple[tuple[str, str], ...]:
        return (("kind", self.kind), ("who", self.who), ("via", self.via))

    @classmethod
    def from_record(cls, data: object) -> Author:
        """The author stored as `data`; anything unreadable is nobody's word (fail closed)."""
        if not isinstance(data, dict):
            return OWNER if data is None else UNKNOWN
        kind = data.get("kind")
        if kind not in _KINDS:
            return UNKNOWN
        return cls(kind, str(data.get("who") or ""), str(data.get("via") or ""))


OWNER = Author()
UNKNOWN = Author("other")
JOB = Author("job")
_KINDS = frozenset(AuthorKind.__args__)  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Part:
    """Something that came with a message: its text for the model, who wrote it, the surface's
    line about it (`note`: where the file is saved, how long a voice note is) and the saved
    file's workspace path for surfaces that show it."""

    kind: PartKind
    text: str
    author: Author
    note: str = ""
    file: str = ""
    name: str = ""

    def for_model(self) -> str:
        """How the model reads it: someone else's text inside the marker every text from
        outside gets, which it cannot close itself."""
        body = self.text if self.author.owned else external(self.author.describe(), self.text)
        return "\n".join(piece for piece in (self.note, body) if piece)

    def record(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.kind,
            "text": self.text,
            "author": self.author.record(),
        }
        data.update((key, value) for key, value in self._extras() if value)
        return data

    def _extras(self) -> tuple[tuple[str, str], ...]:
        return (("note", self.note), ("file", self.file), ("name", self.name))

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> Part:
        kind = data.get("kind")
        return cls(
            kind if kind in _PART_KINDS else "file",
            str(data.get("text") or ""),
            Author.from_record(data.get("author", {})),
            str(data.get("note") or ""),
            str(data.get("file") or ""),
            str(data.get("name") or ""),
        )


_PART_KINDS = frozenset(PartKind.__args__)  # type: ignore[attr-defined]


def external(source: str, text: str) -> str:
    """`text` from `source`, marked as written by someone other than the user."""
    safe = text.replace("</external>", "</ external>")
    return f'<external source="{source}">\n{safe}\n</external>'


def parts_from(records: object) -> tuple[Part, ...]:
    """The parts stored in a record's `parts` field."""
    if not isinstance(records, list):
        return ()
    return tuple(Part.from_record(item) for item in records if isinstance(item, dict))


@dataclass(frozen=True, slots=True)
class Said:
    """One user message as the ledger reads it: its words, its context line, who wrote the
    words, and the parts that came with it."""

    content: str
    context: str = ""
    author: Author = OWNER
    parts: Sequence[Part] = ()

    @classmethod
    def of_record(cls, record: dict[str, Any]) -> Said:
        return cls(
            str(record.get("content") or ""),
            str(record.get("context") or ""),
            Author.from_record(record.get("author")),
            parts_from(record.get("parts")),
        )


@dataclass(slots=True)
class Messages:
    """User messages sorted by who wrote them, for the turn's ledger."""

    owner: list[str] = field(default_factory=list)
    private: list[tuple[str, str]] = field(default_factory=list)
    untrusted: list[tuple[str, str]] = field(default_factory=list)

    def add(self, said: Said) -> None:
        """One message: the owner's words stay the owner's whatever its context or parts hold;
        everything someone else wrote is untrusted (and private: it is the owner's data)."""
        if said.context:
            self.private.append(("this conversation", said.context))
        if said.author.owned:
            self.owner.append(said.content)
        else:
            self.untrusted.append((said.author.describe(), said.content))
            self.private.append(("this conversation", said.content))
        for part in said.parts:
            if part.author.owned and part.kind == "voice":  # the owner's spoken words
                self.owner.append(part.text)
                continue
            self.private.append(("this conversation", part.text))
            if not part.author.owned:
                self.untrusted.append((part.author.describe(), part.text))

    def add_all(self, messages: Iterable[Said]) -> None:
        for said in messages:
            self.add(said)
