"""One ranking from two: reciprocal rank fusion of full-text and vector hits, plus recency.

Ranks, not scores, are fused: BM25 and cosine live on scales that cannot be added (and a cosine
means different things in different models, so no cut is made here: auto-recall asks its own).
Recency is a small bonus (a fact from this week beats an equally good one from last
year), never enough to lift an entry that neither side found.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

# The RRF constant. The usual 60 suits long rankings from many systems; here two rankings are
# read for their top five, and a small constant lets a first place count: on the bench's year
# (docs/memory_recall.md) paraphrase recall@5 went from 0.72 (k=60) to 0.80 (k=10), word-sharing
# recall stayed 1.00.
RRF_K = 10
# Recency, as a share of one list's top rank (1/11 ≈ 0.09; ranks 1 and 5 differ by 0.024), and
# its half-life in days: this week's entry gains a few places among near equals, never a dozen.
RECENCY_WEIGHT = 0.06 / (RRF_K + 1)
HALF_LIFE_DAYS = 90.0


def fuse(
    text_hits: Sequence[tuple[int, float, float]],
    vector_ids: Sequence[int],
    timestamps: Mapping[int, float],
    now: float,
) -> list[tuple[int, float]]:
    """(entry id, fused score) best first, from the full-text ranking (entry id, BM25, the
    share of the query's content words it holds) and the vector ranking.

    A full-text hit counts its rank times the square of that share: one holding a single stray
    word of a paraphrased question ("month" of "In which month does the furnace get checked?")
    is weak evidence, where the vector side's first place for the fact is strong; one holding
    the whole question counts in full. (The share itself let such stray words put the fact
    second or third: docs/memory_recall.md.)
    """
    scores: dict[int, float] = {}
    for rank, (entry_id, _, share) in enumerate(text_hits, start=1):
        scores[entry_id] = scores.get(entry_id, 0.0) + share * share / (RRF_K + rank)
    for rank, entry_id in enumerate(vector_ids, start=1):
        scores[entry_id] = scores.get(entry_id, 0.0) + 1.0 / (RRF_K + rank)
    for entry_id in scores:
        age_days = max(now - timestamps.get(entry_id, now), 0.0) / 86400
        scores[entry_id] += RECENCY_WEIGHT * math.exp(-age_days * math.log(2) / HALF_LIFE_DAYS)
    return sorted(scores.items(), key=lambda item: -item[1])
