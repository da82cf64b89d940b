"""The vector search: the shortlist by half the dimensions ranks by full cosines, as exact search.

Vectors of a low-dimensional structure in many dimensions, as a model's are: every row is a mix
of a few topics plus noise, and so are the queries.
"""

from __future__ import annotations

import pytest

from countbot.memory_index.vectors import SHORTLIST, VectorSet

np = pytest.importorskip("numpy")
ROWS, DIMS, TOPICS = 3 * SHORTLIST, 64, 12


def _rows(rng: np.random.Generator, topics: np.ndarray, count: int) -> np.ndarray:
    rows = rng.standard_normal((count, TOPICS)) ** 3 @ topics
    rows += 0.3 * rng.standard_normal((count, DIMS))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _exact(matrix: np.ndarray, query: np.ndarray, allowed: np.ndarray) -> list[int]:
    scores = np.where(allowed, matrix @ query, -np.inf)
    return [int(i) for i in np.argsort(-scores)[:10]]


def test_the_shortlisted_search_finds_what_an_exact_one_finds_with_filters_and_removals() -> None:
    rng = np.random.default_rng(5)
    topics = rng.standard_normal((TOPICS, DIMS))
    matrix = _rows(rng, topics, ROWS)
    kinds = ["note" if i % 7 == 0 else "conversation" for i in range(ROWS)]
    vectors = VectorSet()
    for start in range(0, ROWS, 500):  # added in chunks, as the index embeds them
        span = range(start, min(start + 500, ROWS))
        vectors.add(
            list(span), [(kinds[i], float(i), None) for i in span], matrix[span.start : span.stop]
        )
    removed = list(range(0, ROWS, 3))  # a third: the matrix is compacted on the next search
    vectors.remove(removed)
    alive = np.ones(ROWS, dtype=bool)
    alive[removed] = False
    notes = alive & np.array([kind == "note" for kind in kinds])

    for query in _rows(rng, topics, 20):
        found = vectors.search(query, lambda *_: True, 10)
        assert [i for i, _ in found] == _exact(matrix, query, alive)
        cosines = [round(float(matrix[i] @ query), 4) for i, _ in found]
        assert [round(score, 4) for _, score in found] == cosines
        only_notes = vectors.search(query, lambda kind, *_: kind == "note", 10)
        assert [i for i, _ in only_notes] == _exact(matrix, query, notes)
        # A filter that leaves 20 rows: the shortlist holds too few of them, all rows are read.
        oldest = vectors.search(query, lambda _kind, ts, _session: ts < 30, 10)
        assert [i for i, _ in oldest] == _exact(matrix, query, alive & (np.arange(ROWS) < 30))
    assert len(vectors) == ROWS - len(removed)
