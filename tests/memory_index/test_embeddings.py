"""Vectors from an OpenAI-compatible `/embeddings` endpoint, and switching models.

The endpoint is a real HTTP server on loopback: words hashed into buckets, so entries that share
a word are near, and its answers for one model can be held back to catch the index mid-switch.
"""

from __future__ import annotations

import asyncio
import socket
import sqlite3
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

from countbot.memory_index.embeddings import EndpointEmbedder, WordLlamaEmbedder
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


async def test_wordllama_drops_its_model_when_idle_and_loads_it_again_on_the_next_call() -> None:
    pytest.importorskip("wordllama")
    embedder = WordLlamaEmbedder(idle_unload=0.05)
    texts = ["the cat sat on the mat", "quarterly tax return"]

    first = await embedder.embed(texts)
    assert embedder.loaded
    for _ in range(int(WAIT / 0.05)):
        if not embedder.loaded:
            break
        await asyncio.sleep(0.05)
    assert not embedder.loaded
    again = await embedder.embed(texts)

    assert embedder.loaded
    assert (first == again).all()
