"""What the `ChannelManager` hands a channel it builds: the shared pieces it works with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from countbot.channels.kit.approvals import ApprovalAnswers
from countbot.channels.kit.intake import Intake
from countbot.common.masking import SecretMasker
from countbot.config.settings import ChannelSettings
from countbot.store.channel_state import ChannelStateStore


@dataclass(frozen=True, slots=True)
class ChannelKit:
    """`name` is the channel's own (`telegram`, or `telegram.work` for another bot account of
    the platform); `settings` is read when needed, so edits to the config apply where they can."""

    name: str
    settings: Callable[[], ChannelSettings]
    intake: Intake
    state: ChannelStateStore
    masker: SecretMasker
    # Where the buttons of approval questions report the user's answer.
    answers: ApprovalAnswers
