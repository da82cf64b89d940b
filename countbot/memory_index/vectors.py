"""The vectors of one model, in memory, searched by one matrix product.

An exact search over every row: at 100,000 entries of 128 float32 dimensions that is 51 MB and a
few milliseconds, well inside the search budget, and nothing to tune or rebuild. New rows are
appended in chunks and joined on the next search; removed ids are masked out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from countbot.memory_index.numeric import numpy_module

if TYPE_CHECKING:
    import numpy as np
Admits = Callable[[str, float, str | None], bool]


class VectorSet:
    """Rows of unit vectors with the facts a filter needs (kind, time, session)."""

    def __init__(self) -> None:
        self._ids: list[int] = []
        self._meta: list[tuple[str, float, str | None]] = []
        self._chunks: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None
        self._removed: set[int] = set()

    def __len__(self) -> int:
        return len(self._ids) - len(self._removed)

    def add(
        self, ids: Sequence[int], meta: Sequence[tuple[str, float, str | None]], rows: np.ndarray
    ) -> None:
        self._ids.extend(ids)
        self._meta.extend(meta)
        self._chunks.append(rows)
        self._removed.difference_update(ids)

    def remove(self, ids: Sequence[int]) -> None:
        self._removed.update(ids)

    def search(self, query: np.ndarray, admits: Admits, limit: int) -> list[tuple[int, float]]:
        """(entry id, cosine similarity) of the nearest admitted rows, best first."""
        np = numpy_module()
        matrix = self._joined()
        if matrix is None or not len(self):
            return []
        scores = matrix @ query
        # The best few hundred first (a partial sort); all of them only if filters ate those.
        top = min(len(scores), max(limit * 20, 200))
        order = np.argpartition(-scores, top - 1)[:top]
        order = order[np.argsort(-scores[order])]
        found = self._admitted(order, scores, admits, limit)
        if len(found) < limit and top < len(scores):
            found = self._admitted(np.argsort(-scores), scores, admits, limit)
        return found

    def _admitted(
        self, order: np.ndarray, scores: np.ndarray, admits: Admits, limit: int
    ) -> list[tuple[int, float]]:
        found: list[tuple[int, float]] = []
        for index in order:
            entry_id = self._ids[index]
            if entry_id in self._removed or not admits(*self._meta[index]):
                continue
            found.append((entry_id, float(scores[index])))
            if len(found) == limit:
                break
        return found

    def _joined(self) -> np.ndarray | None:
        np = numpy_module()
        if self._chunks:
            parts = [self._matrix, *self._chunks] if self._matrix is not None else self._chunks
            self._matrix = np.vstack(parts).astype(np.float32, copy=False)
            self._chunks = []
        if self._removed and len(self._removed) > len(self._ids) // 4:
            self._compact()
        return self._matrix

    def _compact(self) -> None:
        """Drop removed rows once they are a quarter of the matrix."""
        np = numpy_module()
        keep = [i for i, entry_id in enumerate(self._ids) if entry_id not in self._removed]
        assert self._matrix is not None
        self._matrix = self._matrix[np.asarray(keep, dtype=np.int64)]
        self._ids = [self._ids[i] for i in keep]
        self._meta = [self._meta[i] for i in keep]
        self._removed = set()
