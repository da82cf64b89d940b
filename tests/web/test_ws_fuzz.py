"""Fuzzing the WebSocket protocol against a real daemon.

Random JSON, mutations of valid frames, random Unicode (lone surrogates included), enormous
numbers, deep nesting and binary frames. After each frame a ping must be answered on the same
connection (it stayed open); a frame the protocol refuses must have got an error frame; every
turn that was accepted ends with exactly one done/error/cancelled and is stored.
"""

from __future__ import annotations

import asyncio
import json
import random

from countbot.web.protocol import Cancel, ProtocolError, Subscribe, Unsubscribe, parse_frame
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon, WsClient

VALID = [
    {"type": "message", "session_id": None, "content": "hello"},
    {"type": "message", "session_id": "fuzz-a", "content": "x", "mode": "steer"},
    {"type": "cancel", "session_id": "fuzz-a"},
    {"type": "subscribe", "session_id": "fuzz-a", "last_seq": 0},
    {"type": "unsubscribe", "session_id": "fuzz-a"},
    {"type": "ping"},
]


def random_text(rng: random.Random, size: int) -> str:
    """Any code points, lone surrogates included."""
    return "".join(
        chr(rng.choice([rng.randrange(0x20, 0x7F), rng.randrange(0x110000)])) for _ in range(size)
    )


def random_value(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if depth > 3 or roll < 0.5:
        return rng.choice([None, True, 0, -1, 2**70, 1.5, "", random_text(rng, 8), "message"])
    if roll < 0.75:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {random_text(rng, 3): random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def hostile_frame(rng: random.Random) -> str | bytes:
    kind = rng.randrange(9)
    if kind == 0:
        return json.dumps(random_value(rng))
    if kind == 1:  # a valid frame with one field replaced
        frame = dict(rng.choice(VALID))
        frame[rng.choice([*frame, "media", "client_id", "last_seq"])] = random_value(rng)
        return json.dumps(frame)
    if kind == 2:  # a valid frame's text cut or spliced
        text = json.dumps(rng.choice(VALID))
        at = rng.randrange(len(text))
        return text[:at] + random_text(rng, rng.randrange(3)) + text[at + rng.randrange(3) :]
    if kind == 3:  # huge numbers where numbers go, and where they do not
        digits = "9" * rng.choice([400, 5000, 50_000])
        return rng.choice(
            [
                f'{{"type": "subscribe", "session_id": "fuzz-a", "last_seq": {digits}}}',
                f'{{"type": "message", "session_id": null, "content": {digits}}}',
                f'{{"type": "ping", "n": -{digits}.5e{digits}}}',
            ]
        )
    if kind == 4:  # lone surrogates and other odd text as content, escaped as clients may
        content = json.dumps(random_text(rng, 40) + "\ud800" + "\udfff")
        return f'{{"type": "message", "session_id": null, "content": {content}}}'
    if kind == 5:
        return "[" * rng.choice([100, 5000, 100_000])
    if kind == 6:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    if kind == 7:
        return random_text(rng, rng.randrange(1, 200))
    return json.dumps({"type": rng.choice(["message", "cancel", "subscribe", "x", 5, None])})


def expected(frame: str | bytes) -> str:
    """What the protocol promises for `frame`: "error", "any" reply, or "silent" allowed."""
    if isinstance(frame, bytes):
        return "error"
    try:
        parsed = parse_frame(frame)
    except ProtocolError:
        return "error"
    except Exception:  # anything else the parser raises would be a bug the daemon must survive
        return "any"
    if isinstance(parsed, Cancel | Unsubscribe | Subscribe):
        return "silent"  # documented: no reply unless refused (subscribe: unless unknown)
    return "any"


async def replies_until_marker(client: WsClient, start: int, number: int) -> list[dict]:
    """The frames that arrived before the answer to a marker sent after the fuzzed frame.

    The marker is a subscribe to a session that cannot exist, so its error names it uniquely
    (a fuzzed ping would make a second pong, and pongs cannot be told apart).
    """
    marker = f"marker-{number}"
    await client.send({"type": "subscribe", "session_id": marker, "last_seq": None})
    while True:
        frame = await client.recv()
        if frame["type"] == "error" and marker in frame["error"]:
            return client.frames[start:-1]


async def test_random_and_mutated_frames_never_break_the_connection_or_lose_a_turn(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    model_server.default = Reply.text("fuzzed \ud83d\ude00 answer", chunks=2)
    rng = random.Random(20261123)
    client = await daemon.ws()
    try:
        for number in range(150):
            frame = hostile_frame(rng)
            start = len(client.frames)
            await client.send(frame)
            replies = await replies_until_marker(client, start, number)
            promise = expected(frame)
            direct = [f for f in replies if "seq" not in f]  # not events of running turns
            if promise == "error":
                assert any(f["type"] == "error" and f["session_id"] is None for f in direct), (
                    number,
                    frame[:80],
                    replies,
                )
        sessions = {f["session_id"] for f in client.frames if f["type"] == "session"}
    finally:
        await client.close()
    # A fuzzed `unsubscribe` may have stopped this connection watching a session, so the
    # gateway and the store are asked: every turn ends, and ends stored.
    gateway = daemon.context.gateway
    for _ in range(1200):
        if not any(gateway.busy(s) for s in sessions):
            break
        await asyncio.sleep(0.05)
    assert not any(gateway.busy(s) for s in sessions)
    store = daemon.context.runtime.sessions
    for session_id in sessions:
        records = await store.messages(session_id, limit=500)
        users = [i for i, r in enumerate(records) if r["type"] == "user"]
        assert users, session_id
        # Every user message is followed by the turn's answer, error note or cancel note
        # (followups run as turns of their own; a steered message joins the running one).
        assert records[-1]["type"] in ("assistant", "note"), (session_id, records[-1])
    assert len(sessions) >= 5, "the fuzz should start several turns"
    async with daemon.http() as http:
        assert (await http.get("/api/health")).json()["status"] == "ok"
