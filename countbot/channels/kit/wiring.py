"""Wires one enabled chat channel into the daemon: its intake (access, flood limit, chat
commands, media, approval answers) and session feed around the shared stores.

The channel manager imports this module in a worker thread with the first enabled platform's
own: a daemon with no channel enabled never loads the pipeline (docs/cold_start.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from countbot.channels.kit.access import AccessControl
from countbot.channels.kit.approvals import ApprovalAnswers
from countbot.channels.kit.base import Channel
from countbot.channels.kit.commands import ChatCommands
from countbot.channels.kit.feed import SessionFeed
from countbot.channels.kit.intake import Intake, Router
from countbot.channels.kit.media import HouseMedia
from countbot.channels.kit.parts import ChannelKit
from countbot.channels.kit.rate_limit import RateLimiter
from countbot.channels.kit.rendering import RenderSettings
from countbot.config.agent_view import agent_workspace
from countbot.config.settings import ChannelSettings
from countbot.gateway.gateway import Gateway
from countbot.media.speech import Speaker, speaker_for
from countbot.runtime.assembly import Runtime
from countbot.store.channel_state import ChannelStateStore
from countbot.store.pairing import PairingStore


@dataclass(frozen=True, slots=True)
class ChannelWiring:
    """What every channel of one daemon shares; `build` gives one channel its own parts."""

    runtime: Runtime
    gateway: Gateway
    state: ChannelStateStore
    pairing: PairingStore
    web_url: str
    speaker: Speaker | None
    router: Router | None = None

    @classmethod
    def of(
        cls,
        runtime: Runtime,
        gateway: Gateway,
        state: ChannelStateStore,
        pairing: PairingStore,
        web_url: str,
        router: Router | None = None,
    ) -> ChannelWiring:
        """The daemon's wiring, with its speaker for spoken replies (when speech is on) and
        the router that picks each message's agent."""
        speaker = speaker_for(runtime.settings.speech)
        return cls(runtime, gateway, state, pairing, web_url, speaker, router)

    def build(
        self, name: str, kind: type[Channel], settings: Callable[[], ChannelSettings]
    ) -> tuple[Channel, SessionFeed]:
        """The channel with its own intake and feed; `settings` is read on every use, so config
        edits apply."""
        runtime, gateway = self.runtime, self.gateway
        feed = SessionFeed(
            gateway.hub,
            kind.capabilities,
            RenderSettings(
                edit_interval=settings().stream_edit_interval,
                web_url=self.web_url,
                speaker=self.speaker,
                speech_max_chars=runtime.settings.speech.max_chars,
            ),
            name,
            runtime.deliveries.outbox,
        )
        access = AccessControl(name, lambda: settings().allow_from, self.pairing)
        media = HouseMedia(lambda agent: agent_workspace(runtime.settings, agent), runtime.media)
        answers = ApprovalAnswers(name, gateway.approvals, access)
        intake = Intake(
            name,
            gateway=gateway,
            access=access,
            limiter=RateLimiter(settings().rate_limit_per_minute),
            commands=ChatCommands(
                gateway, self.state, runtime.sessions, lambda: runtime.settings.model.name
            ),
            chats=self.state,
            feed=feed,
            media=media,
            answers=answers,
            router=self.router,
        )
        kit = ChannelKit(name, settings, intake, self.state, runtime.masker, answers)
        return kind(kit), feed
