"""The turn's context as one value: everything each model call of a turn is made from.

As pi-mono's agent context, it is made once when a turn opens (the system prompt, the model, the
tools offered, the limits, the cancel token) and only its `entries` grow as the turn goes. The
loop hands it whole to the context keeper, which makes each request from it
(`ContextKeeper.messages`), and to the model call (`turn_stream.call_model`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from countbot.agent.cancel import CancelToken
from countbot.agent.history import HistoryEntry
from countbot.agent.model_choice import ModelChoice
from countbot.config.settings import AgentSettings
from countbot.llm.types import ToolSpec


@dataclass(frozen=True, slots=True)
class TurnContext:
    """One turn's context; see the module docstring."""

    session_id: str
    # The system prompt of every request of the turn (byte-stable: looked up once, as it opens).
    prompt: str
    choice: ModelChoice
    # The tools the turn offers (`agent/toolset.py`), chosen once from its message.
    tools: tuple[ToolSpec, ...]
    # Steps, history length, the share of the window a request may fill.
    limits: AgentSettings
    token: CancelToken
    # The turn's history as it grows; each request is fitted from it (stored history unchanged).
    entries: list[HistoryEntry] = field(default_factory=list)
