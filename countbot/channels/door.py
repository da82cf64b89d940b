"""The one door for platform authors: everything a platform folder may use, and nothing else.

A platform is a folder beside this module (`channels/<platform>/`) holding only what differs
between platforms. Its channel subclasses `PlatformChannel[ItsSettings, ItsClient]`, declares
`name`, `title`, `capabilities` (what differs from the defaults), `required` (the settings it
cannot start without; `run` gets their values from `self.required_values()`), `extra` (its
optional SDK) and `chat_type`, and writes:

- `run(started)`: connect (inside `with self.connected(client):`), call `started()`, serve until
  cancelled; raising means it crashed and the manager restarts it with backoff, except for
  `CredentialsRejected` (the platform refused the token): then it stops and says so.
- its chat class (`chat_type`, a `LinkedChat` of the live client's `Link` and a chat id): a
  `ChatOutput` that can also `send_file` (`post`; `edit` and `typing` where the platform has
  them; `post_buttons` when it has buttons); methods raise `SendError`. A platform whose chats
  need more than the link and the id writes `chat(chat_id)`.
- parsing: its events reduced to `Incoming` messages (`with_attachments` adds the files, each an
  `Attachment` whose `fetch` the intake calls only for a message it lets through: a platform
  never downloads while parsing), handed to `self.take(incoming, chat)`, which de-duplicates,
  checks access, runs commands, takes in the files and submits the turn; the platform confirms
  an event to its server only after `take` returned.
- `self.close_with(client.close)` in `run`: how the daemon closes the live connection before it
  cancels the task (a library may swallow that cancellation); reconnect loops end once
  `self.stopping` is set.

Register the class in `channels/manager.py` (`CHANNEL_TYPES`), write a fake of the platform's API
for the tests and a driver for it in `tests/channels/drivers.py`: the whole scenario matrix
(`tests/channels/test_matrix.py`) then runs on it, restarts and `kill -9` included.
Platform packages import only this module (and their SDK); an import contract checks it.
"""

from __future__ import annotations

from countbot.channels.kit.approvals import Button
from countbot.channels.kit.backoff import Backoff
from countbot.channels.kit.base import (
    Attachment,
    Channel,
    ChannelCapabilities,
    ChatOutput,
    Incoming,
    SendError,
)
from countbot.channels.kit.delivery import FileChat, read_upload
from countbot.channels.kit.failures import CredentialsRejected
from countbot.channels.kit.link import Link, LinkedChat
from countbot.channels.kit.log_masking import masked_logs
from countbot.channels.kit.markdown_syntax import Kept, MarkupRules, escape_entities, rewrite
from countbot.channels.kit.media import kind_of, with_attachments
from countbot.channels.kit.parts import ChannelKit
from countbot.channels.kit.plaintext import markdown_to_plain
from countbot.channels.kit.platform import CONNECTING, PlatformChannel
from countbot.channels.kit.sdk_thread import SdkStopped, SdkThread
from countbot.channels.kit.splitting import truncate
from countbot.common.authorship import Author
from countbot.config.settings import (
    ChannelSettings,
    DingTalkSettings,
    DiscordSettings,
    EmailSettings,
    FeishuSettings,
    QQSettings,
    SlackSettings,
    TelegramSettings,
    WeComSettings,
)
from countbot.runtime.deliveries import DeliveryResult
from countbot.store.pairing import SenderInfo
from countbot.text.declared_charset import decode_declared
from countbot.text.html_text import html_to_text

__all__ = [
    "CONNECTING",
    "Attachment",
    "Author",
    "Backoff",
    "Button",
    "Channel",
    "ChannelCapabilities",
    "ChannelKit",
    "ChannelSettings",
    "ChatOutput",
    "CredentialsRejected",
    "DeliveryResult",
    "DingTalkSettings",
    "DiscordSettings",
    "EmailSettings",
    "FeishuSettings",
    "FileChat",
    "Incoming",
    "Kept",
    "Link",
    "LinkedChat",
    "MarkupRules",
    "PlatformChannel",
    "QQSettings",
    "SdkStopped",
    "SdkThread",
    "SendError",
    "SenderInfo",
    "SlackSettings",
    "TelegramSettings",
    "WeComSettings",
    "decode_declared",
    "escape_entities",
    "html_to_text",
    "kind_of",
    "markdown_to_plain",
    "masked_logs",
    "read_upload",
    "rewrite",
    "truncate",
    "with_attachments",
]
