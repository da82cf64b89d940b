"""One turn's input: the message, where it came from, and what steers or stops it."""

from __future__ import annotations

from dataclasses import dataclass, field

from countbot.agent.cancel import CancelToken
from countbot.agent.ports import SteeringInbox
from countbot.common.authorship import OWNER, Author, Part
from countbot.llm.types import ImagePart
from countbot.tools.approval import Approver


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """What `AgentLoop.process_message` runs; every surface fills in the part it knows.

    `context` rides with the message (not the system prompt); `unattended` says nobody watches (a
    scheduled run); `approver` asks the user where the turn came from (None: tools that need a yes
    are denied); `steering` holds messages sent while the turn runs; `model` is the model this chat
    picked (checked by the resolver against what the owner configured); `author` says who wrote
    `message` and `parts` what came with it (`countbot/common/authorship.py`), as the surface knows
    them from the platform's own facts."""

    message: str
    session_id: str
    context: str | None = None
    media: tuple[ImagePart, ...] = ()
    channel: str | None = None
    chat_id: str | None = None
    cancel_token: CancelToken = field(default_factory=CancelToken)
    unattended: bool = False
    steering: SteeringInbox | None = None
    approver: Approver | None = None
    # A chat's own pick among the configured models (None: the configured one).
    model: str | None = None
    # The only tools this turn may use (a trigger's own set); None: every tool.
    allowed_tools: frozenset[str] | None = None
    author: Author = OWNER
    parts: tuple[Part, ...] = ()
    # The agent whose house runs the turn (its session's agent).
    agent: str = "main"
