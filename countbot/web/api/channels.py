"""The chat channels: their state (secrets masked), and the pairing codes strangers asked for.

Approving here does what `countbot pairing approve` does, through the same store: the sender is
paired at once, and the channel lets them in on their next message.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.store.pairing import CODE_TTL, PairedSender, PairingRequest, PairingStore
from countbot.web.api.errors import ApiError, daemon_of, json_object


async def channels(request: Request) -> JSONResponse:
    return JSONResponse({"channels": daemon_of(request).channels.states()})


def pending_json(pending: PairingRequest) -> dict[str, Any]:
    return {**asdict(pending), "expires_at": pending.created_at + CODE_TTL}


def paired_json(paired: PairedSender) -> dict[str, Any]:
    return asdict(paired)


async def pairing_requests(request: Request) -> JSONResponse:
    store = PairingStore(daemon_of(request).runtime.db)
    pending, paired = await store.pending(time.time()), await store.paired()
    return JSONResponse(
        {"pending": [pending_json(r) for r in pending], "paired": [paired_json(p) for p in paired]}
    )


async def approve_pairing(request: Request) -> JSONResponse:
    body = await json_object(request)
    channel, code = body.get("channel"), body.get("code")
    known = daemon_of(request).runtime.settings.channels.names()
    if not isinstance(channel, str) or channel not in known:
        raise ApiError(400, f"'channel' must be one of: {', '.join(known)}")
    if not isinstance(code, str) or not code.strip():
        raise ApiError(400, "'code' must be the pairing code the sender was given")
    paired = await PairingStore(daemon_of(request).runtime.db).approve(channel, code, time.time())
    if paired is None:
        raise ApiError(
            404,
            f"no pending {channel} pairing code {code.strip().upper()!r}; codes expire after an "
            "hour, and the sender gets a new one by writing to the bot again",
        )
    return JSONResponse(paired_json(paired))


routes = [
    Route("/channels", channels, methods=["GET"]),
    Route("/channels/pairing", pairing_requests, methods=["GET"]),
    Route("/channels/pairing/approve", approve_pairing, methods=["POST"]),
]
