"""Each agent's view of the settings, and which agent a message is bound to.

An agent other than `main` runs on `agent_settings(settings, name)`: the top-level settings with
its own workspace, the sections it sets, its own MCP servers (none unless named), its own
heartbeat (none unless set) and no triggers (those are `main`'s). Everything that confines a
turn (the workspace guard, the sandbox, the memory files and index, the skills) is built from
that view, so an agent's tools see its own house and nothing of another's (`other_houses`).
"""

from __future__ import annotations

from pathlib import Path

from countbot.config.settings import (
    MAIN,
    AgentsSettings,
    Binding,
    Settings,
    platform_and_account,
)
from countbot.config.structs import replaced

# Where an agent's own data lives (its memory index, MCP logs), under `data_dir`.
AGENTS_FOLDER = "agents"


def agent_data_dir(settings: Settings, name: str) -> Path:
    """The folder of `name`'s own data: `data_dir` for `main`, `data_dir/agents/<name>` else."""
    return settings.data_dir if name == MAIN else settings.data_dir / AGENTS_FOLDER / name


def agent_workspace(settings: Settings, name: str) -> Path:
    """`name`'s workspace: the top-level one for `main`."""
    if name == MAIN:
        return settings.workspace
    entry = settings.agents.others[name]
    return entry.workspace or agent_data_dir(settings, name) / "workspace"


def other_houses(settings: Settings, workspace: Path) -> list[Path]:
    """The workspaces and data folders of every agent but the one working in `workspace`:
    what its tools, sandbox and browser must never reach."""
    found: list[Path] = []
    for name in settings.agents.names():
        if agent_workspace(settings, name) == workspace:
            continue
        found.append(agent_workspace(settings, name))
        if name != MAIN:
            found.append(agent_data_dir(settings, name))
    return found


def agent_settings(settings: Settings, name: str) -> Settings:
    """The settings `name`'s house is built from (`settings` itself for `main`)."""
    if name == MAIN:
        return settings
    entry = settings.agents.others[name]
    return replaced(
        settings,
        workspace=agent_workspace(settings, name),
        persona=entry.persona or settings.persona,
        model=entry.model or settings.model,
        tools=entry.tools or settings.tools,
        budget=entry.budget or settings.budget,
        mcp=entry.mcp,
        heartbeat=entry.heartbeat or replaced(settings.heartbeat, enabled=False),
        triggers=type(settings.triggers)(),
    )


def budget_scope(settings: Settings, name: str) -> str | None:
    """Whose conversations count against agent `name`'s budget: its own when it has a `budget`
    section of its own, else every agent's (`main`'s budget is the whole daemon's)."""
    entry = settings.agents.others.get(name)
    return name if entry is not None and entry.budget is not None else None


def agent_secrets(settings: Settings, workspace: Path) -> dict[str, str]:
    """The environment the agent working in `workspace` gives its sandboxed commands."""
    for name, entry in settings.agents.others.items():
        if agent_workspace(settings, name) == workspace:
            return {key: value.get_secret_value() for key, value in entry.secrets.items()}
    return {}


def may_reach(settings: Settings, agent: str, channel: str, chat_id: str) -> bool:
    """Whether `agent` may send into `chat_id` of `channel` (its `message` tool, its jobs; a
    bot account's channel `<platform>.<account>` is matched as its platform and account): a
    chat the bindings give it (read without a sender: a binding of one sender gives no chat),
    or one the owner allowed it (`may_message`)."""
    agents = settings.agents
    platform, account = platform_and_account(channel)
    if bound_agent(agents, platform, account=account, chat=chat_id) == agent:
        return True
    entry = agents.others.get(agent)
    return entry is not None and f"{channel}:{chat_id}" in entry.may_message


def unavailable(agents: AgentsSettings, name: str) -> str:
    """Why agent `name` cannot answer by the config ("" when it can)."""
    if name not in agents.names():
        return f"the assistant {name!r} is not configured"
    if not agents.enabled(name):
        return f"the assistant {name!r} is switched off"
    return ""


def bound_agent(
    agents: AgentsSettings,
    channel: str,
    *,
    account: str | None = None,
    chat: str | None = None,
    sender: str | None = None,
) -> str | None:
    """The agent a message from `sender` in `chat` of `channel` (via bot `account`) goes to:
    the most specific binding that matches (the first written among equals), else the default
    agent (None when the config refuses unbound messages). Whether that agent can answer is
    the caller's question: a binding never falls through to another agent."""
    best: Binding | None = None
    for binding in agents.bindings:
        if (
            _matches(binding.channel, channel)
            and _matches(binding.account, account)
            and _matches(binding.chat, chat)
            and _matches(binding.sender, sender)
            and (best is None or binding.specificity() > best.specificity())
        ):
            best = binding
    if best is not None:
        return best.agent
    return agents.default or None


def _matches(wanted: str | None, actual: str | None) -> bool:
    return wanted is None or (actual is not None and wanted == actual)
