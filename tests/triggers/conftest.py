"""A real daemon (uvicorn in this process) with triggers configured, the fake Telegram as the
owner's chat, and signed webhook requests the way senders make them."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from countbot.config.loader import load_settings
from countbot.config.settings import Settings
from countbot.web.daemon import bind_listener, serve_daemon
from tests.channels.fake_telegram import FakeTelegram
from tests.channels.harness import ALICE, use_fake_telegram
from tests.support.scripted_model import ScriptedModelServer
from tests.web.conftest import WAIT, Daemon, write_config

SECRET = "whsec_" + base64.b64encode(b"a key only the sender and the owner know").decode()
GITHUB_SECRET = "it-is-a-github-secret"
ISSUE = {"action": "opened", "issue": {"number": 7, "title": "Crash on start", "body": "boom"}}


def standard_headers(
    body: bytes, *, secret: str = SECRET, delivery: str | None = None, at: float | None = None
) -> dict[str, str]:
    """Standard Webhooks headers for `body`, signed with `secret`."""
    delivery = delivery or f"msg_{uuid.uuid4().hex}"
    stamp = str(int(time.time() if at is None else at))
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{delivery}.{stamp}.".encode() + body
    signature = base64.b64encode(hmac.digest(key, signed, hashlib.sha256)).decode()
    return {
        "content-type": "application/json",
        "webhook-id": delivery,
        "webhook-timestamp": stamp,
        "webhook-signature": f"v1,{signature}",
    }


def github_headers(body: bytes, *, secret: str = GITHUB_SECRET) -> dict[str, str]:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {
        "content-type": "application/json",
        "x-github-event": "issues",
        "x-github-delivery": str(uuid.uuid4()),
        "x-hub-signature-256": f"sha256={digest}",
    }


def hooks_config(**extra: Any) -> dict[str, Any]:
    """The webhooks the tests post to: `issues` (Standard Webhooks, answer to Alice's Telegram)
    and `github` (GitHub's signature, answer kept in the session)."""
    return {
        "hooks": {
            "issues": {
                "secret": SECRET,
                "prompt": "Summarize this issue in one line and send it to my Telegram.",
                "deliver": f"telegram:{ALICE}",
            },
            "github": {
                "secret": GITHUB_SECRET,
                "scheme": "github",
                "prompt": "Summarize this event.",
            },
        },
        **extra,
    }


def body_of(payload: Any) -> bytes:
    return json.dumps(payload).encode()


DaemonWithTriggers = Callable[..., contextlib.AbstractAsyncContextManager[Daemon]]


@pytest.fixture
def trigger_daemon(
    tmp_path: Path, model_server: ScriptedModelServer, fake_telegram: FakeTelegram
) -> DaemonWithTriggers:
    """`async with trigger_daemon(config) as daemon`: triggers from `config` (default: the
    hooks above), Telegram polling the fake Bot API."""

    @contextlib.asynccontextmanager
    async def start(
        config: dict[str, Any] | None = None, configure: Callable[[Settings], None] | None = None
    ) -> AsyncIterator[Daemon]:
        path = write_config(tmp_path, model_server)
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["triggers"] = config or hooks_config()  # in the file: the web UI's changes add to it
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        settings = load_settings(path)
        if configure is not None:
            configure(settings)
        use_fake_telegram(settings, fake_telegram)
        with bind_listener("127.0.0.1", 0) as listener:
            async with serve_daemon(settings, listener) as running:
                yield Daemon(running.port, running.context, settings)

    return start


async def settled(http: httpx.AsyncClient, event_id: int) -> dict[str, Any]:
    """The event once its turn ended (polled: the turn runs in the daemon)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        for event in (await http.get("/api/triggers/events")).json()["events"]:
            if event["id"] == event_id and event["status"] in ("delivered", "failed"):
                return event
        await asyncio.sleep(0.05)
    raise AssertionError(f"event {event_id} did not settle")
