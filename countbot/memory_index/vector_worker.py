"""The vector worker: `python -m countbot.memory_index.vector_worker`, the daemon's child that
holds the memory index's vectors, searches them, and runs the model that makes them.

A query must be embedded before its vectors can be searched, so the search runs where the model is:
the daemon sends text and gets entry ids and cosines back, and never imports numpy nor holds a
vector (float rows would grow with every entry: docs/vector_search.md). The worker reads the vectors
of its model from the index file when it starts, embeds the entries that have none and stores them
there itself, and is ended when idle, taking all of it with it. The daemon remains the only writer
of entries; the worker writes vectors only, each with a check that its entry still exists.

Its stdin carries one JSON line of set-up (`index`: the index file, `model`: the vector space's
id, `factory`: "module:name" of the model's loader, `options`: its arguments, `rows_dir`: the
folder of the memory-mapped file its vectors' rows are read from, vectors.py), then one JSON line
per request, each answered by one JSON line on stdout:

    {"op": "embed_pending", "limit": n}          -> {"embedded": k} (k = 0: none is left)
    {"op": "search", "query": text, "filters": {kinds, since, until, exclude_session},
     "limit": n, "first_only": bool}              -> {"hits": [[entry id, cosine, ts], ...]}

(`first_only`: a model of several readers embeds the query with its first alone: auto-recall's
search, on every turn's path; models.py. With `"sure": cosine` too, such a model may ask its
second reader when the first's best hit is below that cosine, and the answer then holds
`"picked": [entry id, cosine, ts]`: the entry the second reader singles out, its cosine the
second reader's; `Ensemble.second_query`.)
    {"op": "stats"}                   -> {"rows", "bytes", "file_bytes", "load_seconds"}
    {"op": "remove", "ids": [...]}                -> no answer (sent as entries go, unawaited)

A failed request answers {"error": "..."} and the worker stays up. Nothing of the daemon is
imported here but the index's SQL and the text an entry is embedded by.
"""

from __future__ import annotations

import importlib
import json
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import IO, Any

import numpy as np

from countbot.memory_index import index_db
from countbot.memory_index.models import one_row
from countbot.memory_index.sources import meaning_text
from countbot.memory_index.vectors import SPARE_ROWS, VectorSet, Wanted

# A text's meaning is settled long before this: the model's token window grows with the text (a
# pasted megabyte would take a thousandfold), and entries are cut into ~1,200-character pieces
# anyway.
MAX_EMBED_CHARS = 8_000
# Rows read from the index file per step at start: the vectors arrive without a copy of them all.
LOAD_ROWS = 4_096
# Entries embedded in one catch-up after which the model lets go of what it read for them (the
# offline model: the table rows of their pieces, growing with the entries), once none is left.
RELEASE_AFTER = 1_000


class Worker:
    """The vectors of one model over one index file, and the model, loaded at its first use."""

    def __init__(
        self,
        index: str,
        model: str,
        factory: str,
        options: dict[str, Any],
        rows_dir: str | None = None,
    ) -> None:
        self._conn = sqlite3.connect(index, timeout=30.0, isolation_level=None)
        self._conn.execute("PRAGMA foreign_keys=ON")
        # As the daemon's connection: in WAL mode a commit need not wait for the disk (derived
        # data; at worst the last vectors are made again after a power cut).
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._model_id = model
        self._factory = factory
        self._options = options
        self._rows_dir = Path(rows_dir) if rows_dir else None
        self._model: Any = None
        self._through = 0  # entries up to this id have a vector (or were embedded here)
        self._unreleased = 0  # entries embedded since the model last let go of its pages
        # Whether a search or an entry used the vectors' mapped pages since they were let go.
        self._touched = False
        started = time.perf_counter()
        self._vectors = self._load()
        self.load_seconds = time.perf_counter() - started

    def _load(self) -> VectorSet | None:
        rows = index_db.load_vectors(self._conn, self._model_id)
        # Room for the entries to come, so the first few do not copy the whole matrix.
        capacity = index_db.count_vectors(self._conn, self._model_id) + SPARE_ROWS
        vectors = None
        while batch := rows.fetchmany(LOAD_ROWS):
            matrix = np.frombuffer(b"".join(r[4] for r in batch), dtype=np.float16)
            matrix = matrix.reshape(len(batch), -1)
            if vectors is None:
                vectors = VectorSet(matrix.shape[1], capacity, self._rows_dir)
            vectors.add([r[0] for r in batch], [(r[1], r[2], r[3]) for r in batch], matrix)
        return vectors

    def model(self) -> Any:
        """The model, loaded at its first use."""
        if self._model is None:
            module, name = self._factory.split(":")
            self._model = getattr(importlib.import_module(module), name)(**self._options)
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit float32 rows for `texts`."""
        encoded = self.model().encode([text[:MAX_EMBED_CHARS] for text in texts])
        rows = np.asarray(encoded, dtype=np.float32).reshape(len(texts), -1)
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)

    def embed_pending(self, limit: int) -> dict[str, Any]:
        pending = index_db.pending_vectors(self._conn, self._model_id, self._through, limit)
        if not pending:
            if self._touched and self._vectors is not None:
                self._touched = False
                self._vectors.release()
            if self._unreleased >= RELEASE_AFTER:
                self._unreleased = 0
                if release := getattr(self._model, "release_rows", None):
                    release()
            return {"embedded": 0}
        self._unreleased += len(pending)
        rows = self.embed([meaning_text(row[4]) for row in pending]).astype(np.float16)
        self._conn.execute("BEGIN IMMEDIATE")  # the entries' check and the insert, together
        try:
            blobs = [(row[0], vector.tobytes()) for row, vector in zip(pending, rows, strict=True)]
            stored = index_db.store_vectors(self._conn, self._model_id, blobs)
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        kept = [i for i, row in enumerate(pending) if row[0] in stored]
        if kept:
            if self._vectors is None:
                self._vectors = VectorSet(rows.shape[1], folder=self._rows_dir)
            meta = [(pending[i][1], pending[i][2], pending[i][3]) for i in kept]
            self._vectors.add([pending[i][0] for i in kept], meta, rows[kept])
            self._touched = True
        self._through = pending[-1][0]
        return {"embedded": len(pending)}

    def search(
        self,
        query: str,
        filters: dict[str, Any],
        limit: int,
        first_only: bool = False,
        sure: float | None = None,
    ) -> dict[str, Any]:
        if self._vectors is None or not len(self._vectors):
            return {"hits": []}
        vector = self.query(query, first_only)
        self._touched = True
        wanted = Wanted(**filters)
        hits = self._vectors.search(vector, wanted, limit)
        if sure is not None and (picked := self._second_opinion(query, hits, wanted, sure)):
            return {"hits": hits, "picked": picked}
        return {"hits": hits}

    def _second_opinion(
        self, query: str, hits: list[Any], wanted: Wanted, sure: float
    ) -> list[Any] | None:
        """The entry a model's second reader singles out when its first is unsure of `hits`
        (below `sure`), or None (models.py: `second_query`, `picked`)."""
        model = self.model()
        second_query = getattr(model, "second_query", None)
        if second_query is None or self._vectors is None:
            return None
        row = second_query(query[:MAX_EMBED_CHARS], hits[0][1] if hits else 0.0, sure)
        if row is None:
            return None
        best = self._vectors.search(np.asarray(row, np.float32), wanted, model.pick_against)
        return best[0] if model.picked([cosine for _, cosine, _ in best]) else None

    def query(self, text: str, first_only: bool = False) -> np.ndarray:
        """The row `text` is searched with: the model's own query row when it has one (an
        ensemble weighs its readers), else the text's unit row."""
        model = self.model()
        text = text[:MAX_EMBED_CHARS]
        if encode_query := getattr(model, "encode_query", None):
            return np.asarray(encode_query(text, first_only), np.float32)
        row = np.asarray(one_row(model, text), dtype=np.float32)
        return row / max(float(np.linalg.norm(row)), 1e-9)

    def remove(self, ids: list[int]) -> None:
        if self._vectors is not None:
            self._vectors.remove(ids)

    def stats(self) -> dict[str, Any]:
        vectors = self._vectors
        return {
            "rows": len(vectors) if vectors else 0,
            "bytes": vectors.nbytes if vectors else 0,
            "file_bytes": vectors.file_bytes if vectors else 0,
            "load_seconds": self.load_seconds,
        }

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "search":
            return self.search(
                request["query"],
                request["filters"],
                request["limit"],
                bool(request.get("first_only")),
                request.get("sure"),
            )
        if op == "embed_pending":
            return self.embed_pending(request["limit"])
        if op == "stats":
            return self.stats()
        raise ValueError(f"unknown request {op!r}")


def serve(requests: IO[bytes], out: IO[bytes]) -> None:
    """Set up from the first line, then answer each request line until end of input."""
    setup = json.loads(requests.readline() or b"null")
    if not isinstance(setup, dict):
        return
    worker = Worker(
        setup["index"],
        setup["model"],
        setup["factory"],
        setup.get("options", {}),
        setup.get("rows_dir"),
    )
    for line in requests:
        request = json.loads(line)
        if request.get("op") == "remove":  # unanswered: the daemon does not wait for it
            worker.remove(request["ids"])
            continue
        try:
            reply = worker.answer(request)
        except ImportError:
            reply = {"error": "the memory extra is not installed (pip install 'countbot[memory]')"}
        except Exception as exc:  # the daemon gets the reason; the worker stays up
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    # Ctrl-C in the daemon's terminal reaches its whole process group: the daemon ends the
    # worker itself (its stdin closes), so the signal must not print a traceback here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(sys.stdin.buffer, sys.stdout.buffer)
