"""The model a web chat picked: checked against what the owner configured, kept with the session.

The browser names a model; only the configured one, its fallbacks and the pulled local models
may be picked (the configured key goes with the request). A session remembers its pick, so a
reload, a restart and a message sent without one keep using it.
"""

from __future__ import annotations

from countbot.runtime.model_choices import choosable_models
from countbot.web.context import DaemonContext
from countbot.web.protocol import ProtocolError, SendMessage


async def chat_choices(daemon: DaemonContext) -> list[str]:
    """What the chat's selector offers, the configured model first."""
    settings = daemon.runtime.settings
    return await choosable_models(settings.model, settings.data_dir)


async def turn_model(daemon: DaemonContext, frame: SendMessage) -> str | None:
    """The model this message's turn uses; ProtocolError for a model the chat may not pick."""
    if frame.model is not None:
        choices = await chat_choices(daemon)
        if frame.model not in choices:
            raise ProtocolError(
                f"message: model {frame.model!r} is not configured here;"
                f" choose one of: {', '.join(choices) or '(none)'}",
                frame.client_id,
            )
        return frame.model
    if frame.session_id is None:
        return None
    info = await daemon.runtime.sessions.get(frame.session_id)
    return info.model if info is not None else None
