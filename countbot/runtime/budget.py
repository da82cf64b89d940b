"""Spending limits (`budget.*`), checked before every model call against what SQLite counted.

Usage is recorded per model call (`store.usage`), so the limits hold across restarts and across
every surface, scheduled jobs and the heartbeat included. A call that would cross a limit is not
made: the turn ends with a notice, and every later turn does the same without calling the model
until the limit resets at local midnight or is raised. At 80% of a daily limit a warning is
given once (remembered in SQLite, so a restart does not repeat it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from countbot.agent.ports import SpendCheck
from countbot.config.settings import BudgetSettings
from countbot.llm.model_info import fetch_model_info
from countbot.store.counters import DailyCounters
from countbot.store.usage import UsageLog

WARN_SHARE = 0.8
# The settings of `BudgetSettings` that are limits (the rest say how they apply).
LIMITS = ("daily_tokens", "daily_cost", "session_tokens", "turn_tokens")
# The limits whose share switches turns to `model.economy`.
DAILY = ("daily_tokens", "daily_cost")


@dataclass(frozen=True, slots=True)
class Limit:
    key: str  # the setting, e.g. "daily_tokens"
    what: str  # for people: "today's token budget"
    limit: float
    spent: float
    next: float
    dollars: bool = False

    def shown(self, value: float) -> str:
        return f"${value:,.2f}" if self.dollars else f"{int(value):,} tokens"


class BudgetGuard:
    """The agent's `SpendingGuard`; settings are read on every check so changes apply at once.
    `agent`: the daily limits count that agent's conversations only (None: every agent's)."""

    def __init__(
        self,
        settings: Callable[[], BudgetSettings],
        usage: UsageLog,
        counters: DailyCounters,
        *,
        economy: Callable[[], str] = str,
        agent: str | None = None,
    ) -> None:
        self._settings = settings
        self._usage = usage
        self._counters = counters
        self._economy_model = economy  # `model.economy`, read at each check ("": none)
        self._agent = agent

    async def limits(
        self, session_id: str | None, model: str = "", turn_tokens: int = 0, next_tokens: int = 0
    ) -> list[Limit]:
        """Each configured limit with what has been spent against it (for checks and reports)."""
        budget = self._settings()
        if not self.limited():
            return []
        today = await self._usage.today(session_id, self._agent)
        price = (await fetch_model_info(model)).input_cost_per_token if model else 0.0
        candidates = [
            ("daily_tokens", "today's token budget", budget.daily_tokens, today["tokens"], False),
            ("daily_cost", "today's spending budget", budget.daily_cost, today["cost_usd"], True),
            (
                "session_tokens",
                "this conversation's token budget for today",
                budget.session_tokens if session_id else None,
                today["session_tokens"],
                False,
            ),
            ("turn_tokens", "the token budget for one request", budget.turn_tokens, None, False),
        ]
        limits = []
        for key, what, limit, spent, dollars in candidates:
            if limit is None:
                continue
            spent = turn_tokens if key == "turn_tokens" else spent
            upcoming = next_tokens * price if dollars else next_tokens
            limits.append(Limit(key, what, limit, spent, upcoming, dollars))
        return limits

    def limited(self) -> bool:
        budget = self._settings()
        return any(getattr(budget, name) is not None for name in LIMITS)

    async def check(
        self, session_id: str, model: str, turn_tokens: int, next_tokens: int
    ) -> SpendCheck:
        limits = await self.limits(session_id, model, turn_tokens, next_tokens)
        for limit in limits:
            if limit.spent + limit.next > limit.limit:
                return SpendCheck(stop=_stop_notice(limit))
        warning = None
        for limit in limits:
            if limit.key == "turn_tokens" or limit.spent < WARN_SHARE * limit.limit:
                continue
            scope = session_id if limit.key == "session_tokens" else self._agent or ""
            if await self._counters.add(f"budget-warning:{limit.key}:{scope}") == 1:
                warning = _warning(limit)
                break
        if turn_tokens:  # the model is chosen for whole turns, at their first check
            return SpendCheck(warning=warning)
        economy, notice = await self._economy(limits, session_id, model)
        return SpendCheck(warning=warning, economy=economy, economy_notice=notice)

    async def _economy(
        self, limits: list[Limit], session_id: str, model: str
    ) -> tuple[str | None, str | None]:
        """`model.economy` once a daily limit's `economy_share` is spent, and its notice the
        first time in the conversation that day (remembered in SQLite)."""
        economy, share = self._economy_model(), self._settings().economy_share
        spent = [
            limit for limit in limits if limit.key in DAILY and limit.spent >= share * limit.limit
        ]
        if not economy or economy == model or not spent:
            return None, None
        notice = None
        if await self._counters.add(f"budget-economy:{session_id}") == 1:
            notice = _economy_notice(spent[0], economy)
        return economy, notice


def _economy_notice(limit: Limit, economy: str) -> str:
    share = limit.spent / limit.limit * 100
    return (
        f"Saving budget: {share:.0f}% of {limit.what} is used, so {economy} answers from now "
        f"until the budget resets (model.economy, budget.economy_share)."
    )


def _stop_notice(limit: Limit) -> str:
    if limit.key == "turn_tokens":
        when = "Ask again to continue in a new request, or raise the limit in the settings."
    else:
        when = "It resets at local midnight, or raise the limit in the settings."
    return (
        f"Budget reached: I stopped before the next model call, because it would exceed "
        f"{limit.what} ({limit.shown(limit.spent)} used of {limit.shown(limit.limit)}, the "
        f"next call needs about {limit.shown(limit.next)}; budget.{limit.key}). {when}"
    )


def _warning(limit: Limit) -> str:
    share = limit.spent / limit.limit * 100
    return (
        f"Budget warning: {share:.0f}% of {limit.what} is used "
        f"({limit.shown(limit.spent)} of {limit.shown(limit.limit)}; budget.{limit.key})."
    )


async def budget_report(
    settings: BudgetSettings, usage: UsageLog, counters: DailyCounters, agent: str | None = None
) -> dict[str, object]:
    """Today's spend against each configured limit (for the Usage page and `countbot usage`),
    of `agent`'s conversations only when named (an agent's own budget)."""
    guard = BudgetGuard(lambda: settings, usage, counters, agent=agent)
    today = await usage.today(agent=agent)
    rows: list[dict[str, object]] = [
        {"key": limit.key, "limit": limit.limit, "spent": limit.spent, "dollars": limit.dollars}
        for limit in await guard.limits(None)
        if limit.key != "turn_tokens"
    ]
    for key in ("session_tokens", "turn_tokens"):  # per conversation / per request: no one total
        value = getattr(settings, key)
        if value is not None:
            rows.append({"key": key, "limit": value, "spent": None, "dollars": False})
    return {
        "day": today["day"],
        "tokens": today["tokens"],
        "cost_usd": today["cost_usd"],
        "limits": rows,
    }
