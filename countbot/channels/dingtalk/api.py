"""The DingTalk OpenAPI calls the channel makes, with httpx on the daemon's loop.

dingtalk-stream's own helpers use blocking `requests` and an endpoint fixed at import from the
environment, so sending, uploading and downloading are done here instead, against the
configured endpoints. Failures become `SendError`s: a throttle is retried after a pause, a
refused request (4xx) is permanent, the network or a 5xx is transient.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from countbot.channels.door import SendError

_TOKEN_MARGIN = 300.0
_THROTTLE_PAUSE = 1.0


class DingTalkApi:
    """One robot's OpenAPI access; chats are `private:<staffId>` or `group:<conversationId>`."""

    def __init__(
        self, client: httpx.AsyncClient, app_key: str, app_secret: str, api: str, oapi: str
    ) -> None:
        self._http = client
        self._key = app_key
        self._secret = app_secret
        self._api = api.rstrip("/")
        self._oapi = oapi.rstrip("/")
        self._token: tuple[str, float] | None = None

    async def send(self, chat: str, msg_key: str, params: dict[str, Any]) -> str:
        """Send one robot message; returns DingTalk's `processQueryKey` for it."""
        kind, _, target = chat.partition(":")
        body: dict[str, Any] = {
            "robotCode": self._key,
            "msgKey": msg_key,
            "msgParam": json.dumps(params, ensure_ascii=False),
        }
        if kind == "private" and target:
            path, body["userIds"] = "/v1.0/robot/oToMessages/batchSend", [target]
        elif kind == "group" and target:
            path, body["openConversationId"] = "/v1.0/robot/groupMessages/send", target
        else:
            raise SendError(
                f"{chat!r} is no DingTalk chat: use private:<staffId> or group:<conversationId>",
                permanent=True,
            )
        answer = await self._post(f"{self._api}{path}", body)
        return str(answer.get("processQueryKey") or "")

    async def upload(self, kind: str, name: str, data: bytes) -> str:
        """Upload a picture (`image`) or file (`file`) as robot media; returns its media id."""
        token = await self.token()
        response = await self._request(
            "POST",
            f"{self._oapi}/media/upload",
            params={"access_token": token, "type": kind},
            files={"media": (name, data)},
        )
        answer = response.json()
        if answer.get("errcode", 0) != 0:
            raise SendError(f"DingTalk refused the upload: {answer.get('errmsg')}", permanent=True)
        return str(answer["media_id"])

    async def download(self, download_code: str) -> bytes:
        """A picture or file a user sent, by the `downloadCode` in their message."""
        answer = await self._post(
            f"{self._api}/v1.0/robot/messageFiles/download",
            {"downloadCode": download_code, "robotCode": self._key},
        )
        response = await self._request("GET", str(answer["downloadUrl"]))
        return response.content

    async def token(self) -> str:
        if self._token is not None and self._token[1] > time.monotonic():
            return self._token[0]
        response = await self._request(
            "POST",
            f"{self._api}/v1.0/oauth2/accessToken",
            json={"appKey": self._key, "appSecret": self._secret},
        )
        answer = response.json()
        expires = time.monotonic() + float(answer.get("expireIn", 7200)) - _TOKEN_MARGIN
        self._token = (str(answer["accessToken"]), expires)
        return self._token[0]

    async def _post(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"x-acs-dingtalk-access-token": await self.token()}
        response = await self._request("POST", url, json=body, headers=headers)
        answer = response.json()
        return answer if isinstance(answer, dict) else {}

    async def _request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            response = await self._http.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise SendError(f"DingTalk is unreachable: {type(exc).__name__}") from exc
        if response.is_success:
            return response
        try:
            answer = response.json()
        except ValueError:
            answer = {}
        code = str(answer.get("code", response.status_code))
        detail = f"{answer.get('message') or response.reason_phrase} ({code})"
        if response.status_code == 401:
            self._token = None
        if response.status_code == 429 or "throttl" in code.lower():
            raise SendError(detail, retry_after=_THROTTLE_PAUSE)
        raise SendError(detail, permanent=400 <= response.status_code < 500)
