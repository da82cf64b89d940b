"""What a surface hands the gateway: one user message, addressed to a session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from countbot.common.authorship import OWNER, Author, Part
from countbot.llm.types import ImagePart
from countbot.llm.unicode_repair import repair_text

QueueMode = Literal["followup", "steer", "interrupt"]
QUEUE_MODES: tuple[QueueMode, ...] = ("followup", "steer", "interrupt")


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """A user's message from any surface.

    `session_id` names the session (None starts a new one); `mode` overrides the gateway's
    default queue mode for a message that arrives while the session is busy; `unattended` marks
    a scheduled run.
    """

    channel: str
    content: str
    chat_id: str | None = None
    sender: str | None = None
    media: tuple[ImagePart, ...] = ()
    session_id: str | None = None
    mode: QueueMode | None = None
    # A scheduled run: no one is there to answer a question, the final answer is the deliverable.
    unattended: bool = False
    # Facts for the model only, added to the turn's context line (a subagent report says so).
    context: str | None = None
    # The model this chat picked (the web UI's selector); None: the configured one.
    model: str | None = None
    # The only tools the turn may use (a trigger names its own); None: every tool.
    allowed_tools: frozenset[str] | None = None
    # Who wrote `content`, and what came with it (a document's text, a voice note's
    # transcript), as the surface knows them from the platform's own facts.
    author: Author = OWNER
    parts: tuple[Part, ...] = ()
    # The agent the surface routed it to (`countbot/agents/`); None: the session's own (a new
    # session without one is `main`'s). A session never changes agent: a mismatch is refused.
    agent: str | None = None

    def __post_init__(self) -> None:
        # Every surface hands its text in here: invalid Unicode (a lone surrogate from a client
        # or a platform) is repaired once, before it can break a send or a store write later.
        object.__setattr__(self, "content", repair_text(self.content))
