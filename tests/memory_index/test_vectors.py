"""The vector search of the worker: narrowed by the rows' signs, it ranks by full cosines as an
exact search over the same values does, with filters, removals and growth, whether its rows and
codes are in memory or in mapped files, and after the worker let go of their pages.

Vectors of a low-dimensional structure in many dimensions, as a model's are: every row is a mix
of a few topics plus noise, and so are the queries.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from countbot.memory_index.vectors import SHORTLIST, VectorSet, Wanted  # noqa: E402

# Enough rows that the signs' distance narrows an unfiltered search (after a third is removed).
ROWS, DIMS, TOPICS = 9 * 50 * SHORTLIST, 64, 12
EVERYTHING = Wanted(("note", "conversation"))


def _rows(rng: np.random.Generator, topics: np.ndarray, count: int) -> np.ndarray:
    rows = rng.standard_normal((count, TOPICS)) ** 3 @ topics
    rows += 0.3 * rng.standard_normal((count, DIMS))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _exact(matrix: np.ndarray, query: np.ndarray, allowed: np.ndarray) -> list[int]:
    scores = np.where(allowed, matrix @ query, -np.inf)
    return [int(i) for i in np.argsort(-scores)[:10]]


@pytest.mark.parametrize("in_file", [False, True])
def test_the_narrowed_search_finds_what_an_exact_one_finds_with_filters_and_removals(
    in_file: bool, tmp_path: Path
) -> None:
    rng = np.random.default_rng(5)
    topics = rng.standard_normal((TOPICS, DIMS))
    stored = _rows(rng, topics, ROWS).astype(np.float16)  # as the index file holds them
    matrix = stored.astype(np.float32)
    kinds = ["note" if i % 7 == 0 else "conversation" for i in range(ROWS)]
    sessions = [None if i % 5 == 0 else f"s{i % 3}" for i in range(ROWS)]
    vectors = VectorSet(DIMS, folder=tmp_path / "cache" if in_file else None)
    for start in range(0, ROWS, 500):  # added in chunks, as the worker embeds them: it grows
        span = range(start, min(start + 500, ROWS))
        meta = [(kinds[i], float(i), sessions[i]) for i in span]
        vectors.add(list(span), meta, stored[span.start : span.stop])
    removed = list(range(0, ROWS, 3))  # a third: the set is compacted
    vectors.remove(removed)
    alive = np.ones(ROWS, dtype=bool)
    alive[removed] = False
    notes = alive & np.array([kind == "note" for kind in kinds])
    not_s1 = alive & np.array([session != "s1" for session in sessions])

    for query in _rows(rng, topics, 20):
        vectors.release()  # as the worker does after each catch-up: the pages are read again
        found = vectors.search(query, EVERYTHING, 10)
        assert [i for i, *_ in found] == _exact(matrix, query, alive)
        cosines = [round(float(matrix[i] @ query), 4) for i, *_ in found]
        assert [round(score, 4) for _, score, _ in found] == cosines
        assert [ts for *_, ts in found] == [float(i) for i, *_ in found]  # each entry's time
        only_notes = vectors.search(query, Wanted(("note",)), 10)
        assert [i for i, *_ in only_notes] == _exact(matrix, query, notes)
        elsewhere = vectors.search(query, Wanted(("note", "conversation"), None, None, "s1"), 10)
        assert [i for i, *_ in elsewhere] == _exact(matrix, query, not_s1)
        # A filter that leaves few rows: every one it admits is ranked.
        oldest = vectors.search(query, Wanted(EVERYTHING.kinds, None, 30.0), 10)
        assert [i for i, *_ in oldest] == _exact(matrix, query, alive & (np.arange(ROWS) < 30))
        assert vectors.search(query, Wanted(("file",)), 10) == []
    assert len(vectors) == ROWS - len(removed)
    vectors.close()
    if in_file:  # the rows' file is unlinked from the start: nothing is left behind
        assert list((tmp_path / "cache").iterdir()) == []


def test_a_query_that_asks_one_reader_of_two_finds_what_that_reader_alone_finds() -> None:
    """Rows of an ensemble: two models' unit vectors side by side (models.Ensemble). A query
    zero in the second half (auto-recall asks the first model alone) finds what a search of the
    first halves alone finds, at their cosines: the second half's signs do not blur the
    narrowing (counted in, they changed the hits of 15 queries in 40)."""
    rng = np.random.default_rng(11)
    first, second = (rng.standard_normal((TOPICS, DIMS)) for _ in range(2))
    count = 2 * ROWS
    rows = np.concatenate([_rows(rng, first, count), _rows(rng, second, count)], axis=1)
    stored = (rows / np.sqrt(2)).astype(np.float16)
    meta = [("note", float(i), None) for i in range(count)]
    both = VectorSet(2 * DIMS)
    both.add(list(range(count)), meta, stored)
    alone = VectorSet(DIMS)
    alone.add(list(range(count)), meta, stored[:, :DIMS].astype(np.float32) * np.sqrt(2))
    for query in _rows(rng, first, 40):
        asked = np.concatenate([query * np.sqrt(2), np.zeros(DIMS, np.float32)])
        found = both.search(asked, EVERYTHING, 10)
        expected = alone.search(query, EVERYTHING, 10)
        assert [i for i, *_ in found] == [i for i, *_ in expected]
        assert [s for _, s, _ in found] == pytest.approx([s for _, s, _ in expected], abs=1e-5)


def test_no_room_on_the_disk_for_the_rows_is_an_error_not_a_crash(tmp_path: Path) -> None:
    """The rows' file takes its disk blocks when it grows: a full disk (here a file-size limit)
    fails that step with an OSError the worker answers with, instead of killing it at a write."""
    script = f"""
import resource, signal
from pathlib import Path
import numpy as np
from countbot.memory_index.vectors import VectorSet
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
vectors = VectorSet({DIMS}, folder=Path({str(tmp_path)!r}))
vectors.add([1], [("note", 0.0, None)], np.ones((1, {DIMS}), np.float32))
try:
    vectors.add(list(range(2, 10_002)), [("note", 0.0, None)] * 10_000,
                np.ones((10_000, {DIMS}), np.float32))
except OSError as exc:
    print("refused:", exc.strerror)
vectors.add([2], [("note", 0.0, None)], np.ones((1, {DIMS}), np.float32))  # room for it
print("rows", len(vectors))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["refused: File too large", "rows 2"]
