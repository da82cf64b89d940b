"""The vectors of one model, in memory, searched in two matrix products.

Every row is kept as two halves of its dimensions. A search reads the first halves of all rows,
then the second halves of the best `SHORTLIST` only, and ranks those by their full cosine: at
100,000 entries of 512 dimensions (205 MB) it reads ~103 MB instead of 205. Half the dimensions
rank well enough to shortlist: on the bench's year of 100,000 entries (docs/memory_recall.md)
the shortlisted search found every fact the exact one did. Nothing to tune or rebuild; new rows
are appended in chunks and joined on the next search; removed ids are masked out.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from countbot.memory_index.numeric import numpy_module

if TYPE_CHECKING:
    import numpy as np
Admits = Callable[[str, float, str | None], bool]

# Rows whose full cosine is computed after the first half's ranking.
SHORTLIST = 2_000


class VectorSet:
    """Rows of unit vectors with the facts a filter needs (kind, time, session)."""

    def __init__(self) -> None:
        self._ids: list[int] = []
        self._meta: list[tuple[str, float, str | None]] = []
        self._chunks: list[np.ndarray] = []
        self._head: np.ndarray | None = None  # the rows' first halves
        self._tail: np.ndarray | None = None  # and their second halves
        self._removed: set[int] = set()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._ids) - len(self._removed)

    def add(
        self, ids: Sequence[int], meta: Sequence[tuple[str, float, str | None]], rows: np.ndarray
    ) -> None:
        with self._lock:
            self._ids.extend(ids)
            self._meta.extend(meta)
            self._chunks.append(rows)
            self._removed.difference_update(ids)

    def remove(self, ids: Sequence[int]) -> None:
        self._removed.update(ids)

    def search(self, query: np.ndarray, admits: Admits, limit: int) -> list[tuple[int, float]]:
        """(entry id, cosine similarity) of the nearest admitted rows, best first."""
        np = numpy_module()
        self._join()
        if self._head is None or self._tail is None or not len(self):
            return []
        half = self._head.shape[1]
        first = self._head @ query[:half]
        short = min(len(first), max(limit * 20, SHORTLIST))
        picked = np.argpartition(-first, short - 1)[:short]
        scores = first[picked] + self._tail[picked] @ query[half:]
        order = np.argsort(-scores)
        rows = self._admitted(picked[order], admits)
        # A filter that leaves few of the shortlist (a date range, one kind) gets all rows
        # completed, so its hits are the nearest it admits, not the nearest of a shortlist.
        if len(rows) < limit * 20 and short < len(first):
            everything = first + self._tail @ query[half:]
            rows = self._admitted(np.argsort(-everything), admits, limit)
            return [(self._ids[i], float(everything[i])) for i in rows]
        full = dict(zip(picked.tolist(), scores.tolist(), strict=True))
        return [(self._ids[i], full[i]) for i in rows[:limit]]

    def _admitted(self, order: np.ndarray, admits: Admits, limit: int | None = None) -> list[int]:
        """The rows in `order` that are not removed and that the filter admits (`limit` of them
        at most)."""
        found: list[int] = []
        for index in order.tolist():
            if self._ids[index] in self._removed or not admits(*self._meta[index]):
                continue
            found.append(index)
            if len(found) == limit:
                break
        return found

    def _join(self) -> None:
        """Join the chunks added since the last search (in the search's worker thread)."""
        np = numpy_module()
        with self._lock:  # the loop adds rows meanwhile: their chunk and ids go together
            chunks, self._chunks = self._chunks, []
        if chunks:
            rows = np.vstack(chunks).astype(np.float32, copy=False)
            half = rows.shape[1] // 2
            parts = (rows[:, :half], rows[:, half:])
            if self._head is not None and self._tail is not None:
                parts = (np.vstack([self._head, parts[0]]), np.vstack([self._tail, parts[1]]))
            self._head, self._tail = (np.ascontiguousarray(part) for part in parts)
        if self._removed and len(self._removed) > len(self._ids) // 4:
            with self._lock:
                self._compact()

    def _compact(self) -> None:
        """Drop removed rows once they are a quarter of the matrix (rows added since the join
        keep their ids and their place after it)."""
        np = numpy_module()
        assert self._head is not None and self._tail is not None
        joined = len(self._head)
        keep = [i for i in range(joined) if self._ids[i] not in self._removed]
        index = np.asarray(keep, dtype=np.int64)
        self._head, self._tail = self._head[index], self._tail[index]
        waiting = self._ids[joined:]
        self._ids = [self._ids[i] for i in keep] + waiting
        self._meta = [self._meta[i] for i in keep] + self._meta[joined:]
        self._removed &= set(waiting)
