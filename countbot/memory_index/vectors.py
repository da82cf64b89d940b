"""The vectors of one model, searched where the model runs: in the vector worker, never the daemon.

The worker's own memory does not grow with the rows: each row's full float32 values live in a
memory-mapped file (`RowFile`: an unlinked file beside the index, so the kernel can write its
pages out and read them back, and nothing is left on disk when the worker ends), and so do each
row's sign bits (one bit a dimension: 64 bytes at 512) and filter columns, in a second such file.
The worker lets go of the pages it used after each catch-up (`release`): they stay the kernel's
page cache, read back by the next search. A search narrows in three steps, each over fewer rows
with a finer score:

1. the Hamming distance of every admitted row's signs to the query's (`FIRST_SHARE` of the rows
   or four times the shortlist at least are kept: a histogram's cut, no sort);
2. the query's own values against those rows' signs (asymmetric: a lookup table per byte of the
   code), keeping the best `SHORTLIST` per hit asked for (a shortlist of 1,000 for 50 hits);
3. the exact cosine of those against their full rows, read from the file.

bench/vector_search.py measures it against an exact search (the hits, and what they score) and
its time and memory at 100,000 and 1,000,000 rows; docs/vector_search.md has the figures.

A filter (kinds, a date range, a session left out) is a mask over per-row columns, applied before
the first step: its hits are the nearest it admits. Rows live in arrays (and the file) with room
to spare, so an append does not copy them; removed rows are masked and dropped once they are a
quarter.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# Rows whose exact cosine is computed, per hit asked for: auto-recall asks for a few hits (its
# search waits on every turn), memory_search for 50.
SHORTLIST = 20
# The share of rows (1 / FIRST_SHARE) the sign bits' distance keeps for the second step.
FIRST_SHARE = 32
# Rows of room added when the arrays grow, beyond a quarter of what they hold.
SPARE_ROWS = 1_024
# Rows moved at a time when removed rows are dropped from the file (bounded memory for it).
MOVE_ROWS = 8_192
_NO_SESSION = -1
# Each byte value's eight bits, the first dimension's the highest (np.packbits' order).
_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float32)


@dataclass(frozen=True, slots=True)
class Wanted:
    """What a search may return: the index's `Filters`, as sent over the worker's pipe."""

    kinds: Sequence[str]
    since: float | None = None
    until: float | None = None
    exclude_session: str | None = None


class RowFile:
    """Float32 rows in a shared memory map: of an unlinked file in `folder`, or anonymous."""

    def __init__(self, dims: int, folder: Path | None, capacity: int) -> None:
        self._dims = dims
        self._file = None
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            # Closed by `close`, or with the process: an unlinked file needs no cleanup.
            self._file = tempfile.TemporaryFile(dir=folder, prefix="vectors-")  # noqa: SIM115
        self._map: mmap.mmap | None = None
        self.rows = np.empty((0, dims), dtype=np.float32)
        self.reserve(capacity)

    @property
    def capacity(self) -> int:
        return len(self.rows)

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes

    def reserve(self, rows: int) -> None:
        """Room for `rows` rows (what is held stays)."""
        if rows <= self.capacity:
            return
        size = max(1, rows) * self._dims * 4
        if self._file is not None:
            # Blocks allocated now: a full disk is an OSError here, not a SIGBUS at a write
            # into the map.
            os.posix_fallocate(self._file.fileno(), 0, size)
            grown = mmap.mmap(self._file.fileno(), size)
        else:
            grown = mmap.mmap(-1, size)
            grown[: self.nbytes] = self._map[: self.nbytes] if self._map else b""
        # The old map is unmapped once no array views it any more.
        self._map = grown
        self.rows = np.frombuffer(grown, dtype=np.float32).reshape(-1, self._dims)[:rows]

    def release(self) -> None:
        """Unmap the pages read or written so far (from the file, they stay the kernel's to keep
        or drop): the process holds none of them until they are used again."""
        if self._file is not None and self._map is not None:
            self._map.madvise(mmap.MADV_DONTNEED)

    def keep(self, kept: np.ndarray) -> None:
        """Move the rows numbered `kept` (ascending) to the front, a bounded piece at a time."""
        for start in range(0, len(kept), MOVE_ROWS):
            piece = kept[start : start + MOVE_ROWS]
            self.rows[start : start + len(piece)] = self.rows[piece]

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


class VectorSet:
    """Unit rows of `dims` dimensions with the facts a filter needs (kind, time, session); the
    rows themselves in a `RowFile` in `folder` (None: in memory, for a set that stays small)."""

    def __init__(self, dims: int, capacity: int = 0, folder: Path | None = None) -> None:
        self.dims = dims
        self._words = -(-dims // 64)  # the sign code's 64-bit words
        self._size = 0
        self._removed = 0
        self._kinds: dict[str, int] = {}
        self._sessions: dict[str, int] = {}
        self._folder = folder
        self._columns, self._columns_map = _columns(self._words, capacity, folder)
        self._rows = RowFile(dims, folder, capacity)

    def __len__(self) -> int:
        return self._size - self._removed

    @property
    def nbytes(self) -> int:
        """Memory the codes and columns hold (room to spare included): not the rows' file."""
        return sum(column.nbytes for column in self._columns.values())

    @property
    def file_bytes(self) -> int:
        """The mapped rows' size (room to spare included)."""
        return self._rows.nbytes

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
        self._rows.rows[span] = rows
        codes = self._codes(rows)
        c = self._columns
        for word in range(self._words):
            c[f"code{word}"][span] = codes[:, word]
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
        if not count:
            return []
        query = np.asarray(query, dtype=np.float32)
        padded = np.zeros(self._words * 64, dtype=np.float32)
        padded[: self.dims] = query
        # Words of the code where the query is zero (a reader of an ensemble not asked:
        # models.py) say nothing about it: both sign steps leave them out.
        asked = np.flatnonzero(padded.reshape(self._words, 64).any(axis=1))
        short = limit * SHORTLIST
        first = max(4 * short, self._size // FIRST_SHARE)
        if count <= first:
            picked = np.flatnonzero(admitted)
        else:
            picked = self._nearest_signs(padded, asked, admitted, first)
        if len(picked) > short:
            scores = self._sign_scores(padded, asked, picked)
            picked = picked[np.argpartition(-scores, short - 1)[:short]]
        # Only the dimensions the query's asked words span: the rest of each row adds zero.
        span = slice(int(asked[0]) * 64, min(int(asked[-1] + 1) * 64, self.dims))
        cosines = self._rows.rows[picked, span] @ query[span]
        order = np.argsort(-cosines, kind="stable")[:limit]
        rows, c = picked[order], self._columns
        found = zip(c["ids"][rows], cosines[order], c["ts"][rows], strict=True)
        return [(int(i), float(s), float(t)) for i, s, t in found]

    def release(self) -> None:
        """Unmap the pages of the rows and columns used so far (in files, they stay the kernel's
        page cache): between catch-ups the worker holds none of them, at any size of the set."""
        self._rows.release()
        if self._columns_map is not None:
            self._columns_map.madvise(mmap.MADV_DONTNEED)

    def close(self) -> None:
        """Let go of the rows' file (it is gone from the disk once unmapped)."""
        self._rows.close()

    def _codes(self, rows: np.ndarray) -> np.ndarray:
        """Each row's sign bits as `_words` 64-bit words (zero bits past the last dimension)."""
        packed = np.packbits(np.asarray(rows) > 0, axis=1)
        padded = np.zeros((len(packed), self._words * 8), dtype=np.uint8)
        padded[:, : packed.shape[1]] = packed
        return padded.view(np.uint64)

    def _nearest_signs(
        self, padded: np.ndarray, asked: np.ndarray, admitted: np.ndarray, keep: int
    ) -> np.ndarray:
        """The `keep` admitted rows whose signs differ least from the query's (`padded` to whole
        words) in its `asked` words, found by a histogram of the distances (rows at the cut's
        distance in their order, as many as fit: ties there can be tens of thousands at a
        million rows)."""
        n, c = self._size, self._columns
        code = np.packbits(padded > 0).view(np.uint64)
        distance = np.bitwise_count(c[f"code{asked[0]}"][:n] ^ code[asked[0]]).astype(np.uint16)
        for word in asked[1:]:
            distance += np.bitwise_count(c[f"code{word}"][:n] ^ code[word])
        far = self._words * 64 + 1  # past any distance: the rows a filter leaves out
        distance[~admitted] = far
        cumulative = np.cumsum(np.bincount(distance, minlength=far + 1))
        cut = min(int(np.searchsorted(cumulative, keep)), far - 1)
        closer = np.flatnonzero(distance < cut)
        at_cut = np.flatnonzero(distance == cut)[: keep - len(closer)]
        return np.concatenate([closer, at_cut])

    def _sign_scores(self, padded: np.ndarray, asked: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The query's values (`padded` to whole words) summed over the dimensions each row's
        sign is positive in (its dot product with the row's signs, up to a constant), by a
        table per code byte of its `asked` words, looked up for every byte at once."""
        # (byte position, byte value) -> the query's sum over that byte's set bits.
        tables = (padded.reshape(-1, 8) @ _BITS.T).reshape(-1, 8, 256)[asked].reshape(-1)
        codes = np.empty((len(rows), len(asked)), dtype=np.uint64)
        for column, word in enumerate(asked):
            codes[:, column] = self._columns[f"code{word}"][rows]
        # A word's bytes in memory order are the code's bytes 8 * word onwards: byte k of the
        # row's asked bytes indexes table k.
        index = codes.view(np.uint8).astype(np.intp)
        index += np.arange(index.shape[1], dtype=np.intp) * 256
        return tables[index].sum(axis=1, dtype=np.float32)

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
        capacity = rows + rows // 4 + SPARE_ROWS
        self._rows.reserve(capacity)  # first: a full disk leaves the set as it was
        grown, mapped = _columns(self._words, capacity, self._folder)
        for name, column in self._columns.items():
            grown[name][: self._size] = column[: self._size]
        self._columns, self._columns_map = grown, mapped

    def _compact(self) -> None:
        """Drop removed rows (the arrays and the file keep their room)."""
        keep = np.flatnonzero(self._columns["alive"][: self._size])
        for column in self._columns.values():
            column[: len(keep)] = column[keep]
        self._rows.keep(keep)
        self._size, self._removed = len(keep), 0


def _columns(
    words: int, rows: int, folder: Path | None
) -> tuple[dict[str, np.ndarray], mmap.mmap | None]:
    """The per-row columns, each with room for `rows`: in a map of an unlinked file in `folder`
    (the map keeps it until unmapped, then it is gone), or in memory without one."""
    types = {
        **{f"code{word}": np.dtype(np.uint64) for word in range(words)},
        # one array per word of the sign code: the distance runs down whole arrays
        "ids": np.dtype(np.int64),
        "kinds": np.dtype(np.uint8),
        "ts": np.dtype(np.float64),
        "sessions": np.dtype(np.int32),
        "alive": np.dtype(bool),
    }
    if folder is None:
        return {name: np.empty(rows, dtype=kind) for name, kind in types.items()}, None
    spans = [-(-rows * kind.itemsize // mmap.PAGESIZE) * mmap.PAGESIZE for kind in types.values()]
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=folder, prefix="columns-") as file:
        size = max(mmap.PAGESIZE, sum(spans))
        os.posix_fallocate(file.fileno(), 0, size)  # a full disk: an OSError now, not a SIGBUS
        mapped = mmap.mmap(file.fileno(), size)
    columns, offset = {}, 0
    for (name, kind), span in zip(types.items(), spans, strict=True):
        columns[name] = np.frombuffer(mapped, dtype=kind, count=rows, offset=offset)
        offset += span
    return columns, mapped
