"""The Slack Web API calls the channel makes (slack-sdk's `AsyncWebClient`), their failures as
`SendError`. Imported only when the channel runs: slack-sdk is an optional extra.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from countbot.channels.door import SendError

# Errors no retry can fix: the chat is gone, or the bot may not write there.
_PERMANENT = frozenset(
    {
        "channel_not_found",
        "not_in_channel",
        "is_archived",
        "msg_too_long",
        "no_text",
        "invalid_auth",
        "account_inactive",
        "token_revoked",
        "restricted_action",
        "cant_update_message",
        "message_not_found",
        "invalid_blocks",
    }
)
DOWNLOAD_TIMEOUT = aiohttp.ClientTimeout(total=60)


async def call(request: Callable[[], Awaitable[Any]]) -> Any:
    """One Web API call, its failures as `SendError`."""
    try:
        return await request()
    except SlackApiError as exc:
        data = exc.response.data if isinstance(exc.response.data, dict) else {}
        error = str(data.get("error") or f"HTTP {exc.response.status_code}")
        retry_after = None
        if error == "ratelimited":
            retry_after = float(exc.response.headers.get("Retry-After", "1"))
        raise SendError(error, retry_after=retry_after, permanent=error in _PERMANENT) from exc
    except (TimeoutError, aiohttp.ClientError) as exc:
        raise SendError(f"Slack is unreachable: {type(exc).__name__}") from exc


class SlackApi:
    """The bot's Web API client; `thread` is a thread's ts, or None for the channel itself."""

    def __init__(self, bot_token: str, base_url: str) -> None:
        self.client = AsyncWebClient(token=bot_token, base_url=base_url)
        self._token = bot_token

    async def identity(self) -> tuple[str, str]:
        """(the bot's user id, its name); wrong tokens fail here."""
        answer = await call(self.client.auth_test)
        return str(answer["user_id"]), str(answer.get("user") or "")

    async def post(
        self, channel: str, thread: str | None, text: str, blocks: list[dict[str, Any]] | None
    ) -> str:
        answer = await call(
            lambda: self.client.chat_postMessage(
                channel=channel, thread_ts=thread, text=text, blocks=blocks, unfurl_links=False
            )
        )
        return str(answer["ts"])

    async def update(self, channel: str, ts: str, text: str) -> None:
        # `blocks=[]` also removes the buttons of an answered approval question.
        await call(lambda: self.client.chat_update(channel=channel, ts=ts, text=text, blocks=[]))

    async def ephemeral(self, channel: str, thread: str | None, user: str, text: str) -> None:
        await call(
            lambda: self.client.chat_postEphemeral(
                channel=channel, thread_ts=thread, user=user, text=text
            )
        )

    async def upload(self, channel: str, thread: str | None, name: str, data: bytes) -> str:
        answer = await call(
            lambda: self.client.files_upload_v2(
                channel=channel, thread_ts=thread, file=data, filename=name
            )
        )
        return str(answer["files"][0]["id"])

    async def download(self, url: str) -> bytes:
        """A file a user shared (`url_private_download`, readable with the bot's token)."""
        headers = {"Authorization": f"Bearer {self._token}"}
        try:
            async with (
                aiohttp.ClientSession(timeout=DOWNLOAD_TIMEOUT) as session,
                session.get(url, headers=headers) as response,
            ):
                if response.status != 200:
                    raise SendError(f"Slack answered {response.status}")
                return await response.read()
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise SendError(f"Slack is unreachable: {type(exc).__name__}") from exc
