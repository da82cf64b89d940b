"""The inbox a running turn reads "steer" messages from (the agent's `SteeringInbox`)."""

from __future__ import annotations

from countbot.common.authorship import Said
from countbot.gateway.messages import InboundMessage


class SteeringBox:
    """Messages for the running turn; what it never reads is taken back and run as a followup."""

    def __init__(self) -> None:
        self._messages: list[InboundMessage] = []

    def put(self, message: InboundMessage) -> None:
        self._messages.append(message)

    def pending(self) -> bool:
        return bool(self._messages)

    def drain(self) -> list[Said]:
        """Hand every waiting message to the turn, which now owns them."""
        texts = [
            Said(message.content, message.context or "", message.author, message.parts)
            for message in self._messages
        ]
        self._messages.clear()
        return texts

    def take_back(self) -> list[InboundMessage]:
        """The messages the turn did not read, in arrival order."""
        left, self._messages = self._messages, []
        return left
