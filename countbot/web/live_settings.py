"""Apply freshly loaded settings to the running daemon: what can change live, and what cannot.

One rule for both ways settings change while the daemon runs (a save on the Settings page, an
edit of config.yaml seen by the watcher): the sections below take effect at once, every other
changed section is named as needing a restart, so no surface claims an effect it does not have.
"""

from __future__ import annotations

from countbot.config.settings import Settings
from countbot.web.context import DaemonContext

# Changed in place: objects handed out at start-up (the context builder's persona, the gateway's
# settings) read their fields on every use.
IN_PLACE = ("persona", "gateway")
# Replaced: read through `runtime.settings` on every use (the model resolver, the budget guard,
# the outbound data-flow policy, the webhook door and the triggers' dispatcher: a hook's change
# applies at once; a watched folder's or mailbox's, and the body limit, wait for a restart).
REPLACED = ("model", "budget", "security", "triggers")
# Followed by the running servers: added ones start, removed or switched-off ones stop.
FOLLOWED = ("mcp",)
# Not settings of the running daemon: where the file itself lives.
_NOT_SECTIONS = frozenset({"config_path"})


async def apply_settings(daemon: DaemonContext, fresh: Settings) -> list[str]:
    """Apply `fresh` where it differs from the running settings; returns the sections that
    changed but take effect only after a restart (sorted)."""
    live = daemon.runtime.settings
    restart = ["triggers"] if _watched(fresh) != _watched(live) else []
    if fresh.model != live.model:
        # Failures of the model as configured before say nothing about it as configured now.
        daemon.runtime.models.cooldowns.clear()
        if fresh.model.api_key is not None:
            daemon.runtime.masker.add(fresh.model.api_key.get_secret_value())
    for name in REPLACED:
        setattr(live, name, getattr(fresh, name))
    if fresh.mcp != live.mcp:
        live.mcp = fresh.mcp
        await daemon.runtime.apply_mcp(fresh.mcp)
    for name in IN_PLACE:
        section, wanted = getattr(live, name), getattr(fresh, name)
        for field in section.__struct_fields__:
            setattr(section, field, getattr(wanted, field))
    await daemon.runtime.models.release_unused()  # a local model no longer chosen stops now
    live_here = {*IN_PLACE, *REPLACED, *FOLLOWED, *_NOT_SECTIONS}
    return sorted(
        restart
        + [
            name
            for name in Settings.__struct_fields__
            if name not in live_here and getattr(fresh, name) != getattr(live, name)
        ]
    )


def _watched(settings: Settings) -> tuple[object, ...]:
    """What of `triggers` is set up once at start: the watchers and the body limit."""
    triggers = settings.triggers
    return (triggers.folders, triggers.mailboxes, triggers.max_body_bytes)
