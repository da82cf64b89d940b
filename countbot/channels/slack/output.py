"""Sending to Slack: a chat as the shared code's `ChatOutput` and the channel's sender for the
delivery path.

Answers are posted once and then updated in place (`chat.update`) while they stream; messages
in a thread chat (`<channel>/<thread_ts>`) go into that thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from countbot.channels.door import Button, Link, LinkedChat, escape_entities, read_upload
from countbot.channels.slack.events import chat_ref
from countbot.channels.slack.mrkdwn import markdown_to_mrkdwn

# The API module imports the optional SDK, so its type is only named for checkers.
if TYPE_CHECKING:
    from countbot.channels.slack.api import SlackApi
else:
    SlackApi = Any

# Slack accepts 40,000 characters but advises (and shows whole) messages up to 4,000.
MAX_MESSAGE = 4000


class SlackChat(LinkedChat[SlackApi]):
    """One Slack chat: a channel or DM id, or `<channel>/<thread_ts>` for a thread."""

    def __init__(self, link: Link[SlackApi], chat_id: str) -> None:
        super().__init__(link, chat_id)
        self._channel, self._thread = chat_ref(chat_id)

    async def post(self, text: str, *, markdown: bool = True) -> str:
        api = self._link.require()
        return await api.post(self._channel, self._thread, _body(text, markdown), None)

    async def edit(self, message_id: str, text: str, *, markdown: bool = True) -> None:
        await self._link.require().update(self._channel, message_id, _body(text, markdown))

    async def post_buttons(self, text: str, buttons: Sequence[Button]) -> str:
        body = markdown_to_mrkdwn(text)
        elements = [
            {
                "type": "button",
                "action_id": f"countbot-{index}",
                "text": {"type": "plain_text", "text": button.label},
                "value": button.data,
            }
            for index, button in enumerate(buttons)
        ]
        blocks = [
            {"type": "section", "text": {"type": "mrkdwn", "text": body}},
            {"type": "actions", "elements": elements},
        ]
        return await self._link.require().post(self._channel, self._thread, body, blocks)

    async def send_file(self, path: Path) -> str:
        api = self._link.require()
        return await api.upload(self._channel, self._thread, path.name, await read_upload(path))


def _body(text: str, markdown: bool) -> str:
    return markdown_to_mrkdwn(text) if markdown else escape_entities(text)
