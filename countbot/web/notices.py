"""Frames pushed to every open client, outside any session: daemon status, session-list changes.

A client asks for them with a `subscribe_notices` frame. They keep a browser tab true without
polling: the "no model" and "built-in model" banners follow the settings, and a
conversation started on Telegram, by `countbot chat -m` or by a job appears in the sidebar.
"""

from __future__ import annotations

from typing import Any

from countbot.web.context import DaemonContext


def status_frame(daemon: DaemonContext) -> dict[str, Any]:
    """What the UI shows about the daemon itself: sent when a client subscribes to notices and
    pushed after every settings change."""
    return {
        "type": "status",
        "model_configured": daemon.model_configured,
        "offline_default": daemon.offline_default,
        "config": daemon.config_state.as_dict(),
    }


def push_status(daemon: DaemonContext) -> None:
    daemon.gateway.hub.broadcast(status_frame(daemon))


def push_session_changes(daemon: DaemonContext) -> None:
    """Tell every open client when a session is created, active, renamed or deleted."""
    hub = daemon.gateway.hub

    def changed(session_id: str, change: str) -> None:
        hub.broadcast({"type": "sessions_changed", "session_id": session_id, "change": change})

    daemon.runtime.sessions.on_change(changed)
