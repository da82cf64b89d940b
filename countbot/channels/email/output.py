"""Sending mail: a conversation as the shared code's `ChatOutput` and the channel's sender for
the delivery path.

A chat is `<address>` (a new thread, as scheduled jobs start) or `<address>/<root Message-ID>`
(a thread). Replies carry `In-Reply-To`/`References` so mail clients thread them; what the
channel saw of a thread (subject, last mail) is remembered while it runs, and a thread it has
not seen since a restart is still answered into its root. Mail cannot be edited, so answers are
sent complete, as plain text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from countbot.channels.door import (
    Button,
    Link,
    LinkedChat,
    markdown_to_plain,
    read_upload,
)
from countbot.channels.email.mail_in import Thread
from countbot.channels.email.postman import Outgoing, Postman

# Mail has no length limit that matters; this keeps one mail readable.
MAX_MESSAGE = 50_000
NEW_SUBJECT = "A message from your assistant"
NO_BUTTONS = "Mail cannot carry buttons: approve or deny this in the web UI (Chats page)."


class EmailChat(LinkedChat[Postman]):
    def __init__(self, link: Link[Postman], chat_id: str, threads: dict[str, Thread]) -> None:
        super().__init__(link, chat_id)
        self._to, _, root = chat_id.partition("/")
        self._thread = threads.get(chat_id) or (Thread("", root, (root,)) if root else None)

    def _mail(self, text: str, attachment: tuple[str, bytes] | None = None) -> Outgoing:
        thread = self._thread
        if thread is None:
            return Outgoing(self._to, NEW_SUBJECT, text, attachment=attachment)
        subject = thread.subject or "your message"
        if not subject.lower().startswith("re:"):
            subject = f"Re: {subject}"
        return Outgoing(self._to, subject, text, thread.last_id, thread.references, attachment)

    async def post(self, text: str, *, markdown: bool = True) -> str:
        body = markdown_to_plain(text) if markdown else text
        return await self._link.require().send(self._mail(body))

    async def post_buttons(self, text: str, buttons: Sequence[Button]) -> str:
        return await self.post(f"{text}\n\n{NO_BUTTONS}")

    async def send_file(self, path: Path) -> str:
        data = await read_upload(path)
        return await self._link.require().send(
            self._mail(f"{path.name} is attached.", (path.name, data))
        )
