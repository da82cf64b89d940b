"""Chat commands every channel understands: /new, /stop, /help, /status (and /start).

They act on the chat's session through the gateway and never start an agent turn. Any other
`/word` is an ordinary message for the model.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from countbot.gateway.gateway import Gateway
from countbot.store.channel_state import ChannelStateStore
from countbot.store.sessions import SessionStore

HELP = (
    "I'm your CountBot assistant: just write to me. Photos and documents are welcome too.\n\n"
    "/new: start a fresh conversation\n"
    "/stop: stop the answer I'm writing\n"
    "/status: what I'm doing and which model I use\n"
    "/help: this message"
)
COMMANDS = frozenset({"new", "stop", "help", "status", "start"})


@dataclass(frozen=True, slots=True)
class CommandContext:
    channel: str
    chat_id: str
    session_id: str


def parse_command(text: str) -> str | None:
    """The known command `text` is (`/stop`, `/stop@my_bot`, `/STOP now`), else None."""
    name, _ = command_word(text)
    return name if name in COMMANDS else None


def command_word(text: str) -> tuple[str, str]:
    """(the command's name, what follows it) of a `/word …` text; ("", "") for other text."""
    if not text.startswith("/") or not text[1:].strip():
        return "", ""
    parts = text[1:].split(maxsplit=1)
    return parts[0].split("@", 1)[0].lower(), parts[1] if len(parts) > 1 else ""


def default_session(channel: str, chat_id: str) -> str:
    """A chat's first session key, `<channel>:<chat_id>`."""
    return f"{channel}:{chat_id}"


@dataclass(eq=False)
class ChatCommands:
    """Runs a command for one chat and returns the reply (None: the turn's own output answers)."""

    gateway: Gateway
    chats: ChannelStateStore
    sessions: SessionStore
    model_name: Callable[[], str]

    async def run(self, name: str, ctx: CommandContext) -> str | None:
        if name == "new":
            return await self._new(ctx)
        if name == "stop":
            # When a turn was running, its own "Stopped." is the confirmation that it really did;
            # background work (the chat's subagents) stopping alone gets one here.
            turn = self.gateway.busy(ctx.session_id)
            if not self.gateway.cancel(ctx.session_id):
                return "Nothing is running."
            return None if turn else "Stopped."
        if name == "status":
            return await self._status(ctx)
        return HELP

    async def _new(self, ctx: CommandContext) -> str:
        session_id = f"{default_session(ctx.channel, ctx.chat_id)}:{uuid.uuid4().hex[:6]}"
        await self.chats.assign_session(ctx.channel, ctx.chat_id, session_id)
        return "Started a new conversation. The previous one is kept in the web UI."

    async def _status(self, ctx: CommandContext) -> str:
        info = await self.sessions.get(ctx.session_id)
        count = info.message_count if info is not None else 0
        model = self.model_name() or "none configured"
        doing = "writing an answer" if self.gateway.busy(ctx.session_id) else "idle"
        return (
            f"Session: `{ctx.session_id}` ({count} messages)\nModel: `{model}`\nRight now: {doing}"
        )
