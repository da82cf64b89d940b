"""The vectors of one model, searched where the model runs: in the vector worker, never the daemon.

Every row is kept as two halves of its dimensions: the first in float32, the second in float16.
A search ranks every admitted row by its first half (one BLAS product: ~100 MB read at 100,000
rows of 512 dimensions), then completes the best `SHORTLIST` with the second half and ranks those
by their full cosine. On the bench's year of 100,000 entries (docs/memory_recall.md) that finds
every fact the exact product finds, in a third of its time. The second half is float16 because
only 2,000 of its rows are read per search; the first stays float32 because numpy has no BLAS
product in float16, and converting 100,000 half rows per search costs several times the product
itself (47 ms against 8.5 measured). The stored vectors are float16 already (index_db), so the
cosines are the ones the index always ranked by.

A filter (kinds, a date range, a session left out) is a mask over per-row columns, applied before
the shortlist: its hits are the nearest it admits. Rows live in arrays with room to spare, so an
append does not copy the matrix; removed rows are masked and dropped once they are a quarter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Rows whose full cosine is computed after the first half's ranking.
SHORTLIST = 2_000
# Rows of room added when the arrays grow, beyond a quarter of what they hold.
SPARE_ROWS = 1_024
_NO_SESSION = -1


@dataclass(frozen=True, slots=True)
class Wanted:
    """What a search may return: the index's `Filters`, as sent over the worker's pipe."""

    kinds: Sequence[str]
    since: float | None = None
    until: float | None = None
    exclude_session: str | None = None


class VectorSet:
    """Unit rows of `dims` dimensions with the facts a filter needs (kind, time, session)."""

    def __init__(self, dims: int, capacity: int = 0) -> None:
        self.dims = dims
        self._half = dims // 2
        self._size = 0
        self._removed = 0
        self._kinds: dict[str, int] = {}
        self._sessions: dict[str, int] = {}
        self._columns = _columns(dims, capacity)

    def __len__(self) -> int:
        return self._size - self._removed

    @property
    def nbytes(self) -> int:
        """Memory the rows and their columns hold (room to spare included)."""
        return sum(column.nbytes for column in self._columns.values())

    def add(
        self,
        ids: Sequence[int],
        meta: Sequence[tuple[str, float, str | None]],
        rows: np.ndarray,
    ) -> None:
        """Append rows (unit vectors, float32 or float16) with their ids and (kind, ts, session)."""
        count = len(ids)
        if not count:
            return
        self._reserve(self._size + count)
        span = slice(self._size, self._size + count)
        c = self._columns
        c["head"][span] = rows[:, : self._half]
        c["tail"][span] = rows[:, self._half :]
        c["ids"][span] = ids
        c["kinds"][span] = [self._kinds.setdefault(kind, len(self._kinds)) for kind, _, _ in meta]
        c["ts"][span] = [ts for _, ts, _ in meta]
        c["sessions"][span] = [self._session_code(session) for _, _, session in meta]
        c["alive"][span] = True
        self._size += count

    def remove(self, ids: Sequence[int]) -> None:
        if not ids or not self._size:
            return
        alive = self._columns["alive"][: self._size]
        gone = alive & np.isin(self._columns["ids"][: self._size], np.asarray(ids, np.int64))
        alive[gone] = False
        self._removed += int(np.count_nonzero(gone))
        if self._removed > self._size // 4:
            self._compact()

    def search(
        self, query: np.ndarray, wanted: Wanted, limit: int
    ) -> list[tuple[int, float, float]]:
        """(entry id, cosine similarity, time) of the nearest admitted rows, best first: with the
        time, the index ranks by recency without reading these entries' rows."""
        admitted = self._admitted(wanted)
        count = int(np.count_nonzero(admitted))
        short = min(count, max(limit * 20, SHORTLIST))
        if not short:
            return []
        c, n = self._columns, self._size
        first = np.where(admitted, c["head"][:n] @ query[: self._half], -np.inf)
        picked = np.argpartition(-first, short - 1)[:short] if short < n else np.arange(n)
        tail = c["tail"][picked].astype(np.float32)
        scores = first[picked] + tail @ query[self._half :]
        order = np.argsort(-scores)[:limit]
        rows = picked[order]
        found = zip(c["ids"][rows], scores[order], c["ts"][rows], strict=True)
        return [(int(i), float(s), float(t)) for i, s, t in found]

    def _admitted(self, wanted: Wanted) -> np.ndarray:
        c, n = self._columns, self._size
        kinds = np.zeros(len(self._kinds) + 1, dtype=bool)
        kinds[[self._kinds[k] for k in wanted.kinds if k in self._kinds]] = True
        admitted = c["alive"][:n] & kinds[c["kinds"][:n]]
        if wanted.since is not None:
            admitted &= c["ts"][:n] >= wanted.since
        if wanted.until is not None:
            admitted &= c["ts"][:n] < wanted.until
        if wanted.exclude_session in self._sessions:
            admitted &= c["sessions"][:n] != self._sessions[wanted.exclude_session]
        return admitted

    def _session_code(self, session: str | None) -> int:
        if session is None:
            return _NO_SESSION
        return self._sessions.setdefault(session, len(self._sessions))

    def _reserve(self, rows: int) -> None:
        """Room for `rows` rows: grown by a quarter and SPARE_ROWS, so appends copy rarely."""
        if rows <= len(self._columns["ids"]):
            return
        grown = _columns(self.dims, rows + rows // 4 + SPARE_ROWS)
        for name, column in self._columns.items():
            grown[name][: self._size] = column[: self._size]
        self._columns = grown

    def _compact(self) -> None:
        """Drop removed rows (the arrays keep their room)."""
        keep = np.flatnonzero(self._columns["alive"][: self._size])
        for column in self._columns.values():
            column[: len(keep)] = column[keep]
        self._size, self._removed = len(keep), 0


def _columns(dims: int, rows: int) -> dict[str, np.ndarray]:
    half = dims // 2
    return {
        "head": np.empty((rows, half), dtype=np.float32),
        "tail": np.empty((rows, dims - half), dtype=np.float16),
        "ids": np.empty(rows, dtype=np.int64),
        "kinds": np.empty(rows, dtype=np.uint8),
        "ts": np.empty(rows, dtype=np.float64),
        "sessions": np.empty(rows, dtype=np.int32),
        "alive": np.empty(rows, dtype=bool),
    }
