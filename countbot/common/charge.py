"""What a model call cost and whose budgets it counts against, as plain numbers: the agent makes
it (an answer's is stored with the answer), the store's usage table counts it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Charge:
    """`model`'s tokens and price, counted against session `session_id` (a subagent's: the
    conversation that started it). The last three are shares of `prompt_tokens` shown apart:
    read from the provider's prompt cache, written to it, and auto-recall's block."""

    session_id: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    recall_tokens: int = 0
