"""Who wrote a message the model reads as the user's: the marks a surface puts in its context.

A user record's context line says when its text is not the user's own: a subagent's report, a
group member the open door let in, a forward, an unauthenticated mail (`NOT_TYPED`, or text
wrapped as `<external>`): then the whole message is a stranger's text. A context that carries
someone else's text beside the user's words (a workspace skill loaded with `/name`) wraps that
text with `untrusted_block`: the words stay the user's, the block is a stranger's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

NOT_TYPED = "not something the user typed"
_NOT_THE_USERS = ("<external", NOT_TYPED)
_BLOCK = "<untrusted "
_BLOCK_SOURCE = re.compile(r'<untrusted source="([^"\n]{0,200})">')


def untrusted_block(source: str, text: str) -> str:
    """`text` (from `source`) marked as a stranger's inside a message's context."""
    return f'{_BLOCK}source="{source}">\n{text}\n</untrusted>'


@dataclass(slots=True)
class Messages:
    """User messages sorted by who wrote them, for the turn's ledger."""

    owner: list[str] = field(default_factory=list)
    private: list[tuple[str, str]] = field(default_factory=list)
    untrusted: list[tuple[str, str]] = field(default_factory=list)

    def add(self, content: str, context: str) -> None:
        """One message: its text and the context line that came with it."""
        if context:
            self.private.append(("this conversation", context))
        if any(mark in context for mark in _NOT_THE_USERS):
            self.untrusted.append(("a message the user did not write", f"{content}\n{context}"))
            self.private.append(("this conversation", content))
            return
        for source in _BLOCK_SOURCE.findall(context):
            self.untrusted.append((source, context))
        self.owner.append(content)


def typed_by_user(context: str) -> bool:
    """Whether a message with this context is the user's own words."""
    return not any(mark in context for mark in _NOT_THE_USERS)
