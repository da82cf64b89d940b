"""One ranking from two: reciprocal rank fusion of full-text and vector hits, plus recency.

Ranks, not scores, are fused: BM25 and cosine live on scales that cannot be added. Recency is a
small bonus (a fact from this week beats an equally good one from last year), never enough to
lift an entry that neither side found.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

# The usual RRF constant: rank 1 scores 1/61, rank 50 about 1/110.
RRF_K = 60
# A vector candidate below this cosine is noise, not a paraphrase (measured on the bench's year:
# paraphrases of a fact mostly score 0.25-0.7 with WordLlama, unrelated entries under 0.2).
MIN_COSINE = 0.25
# Weight of recency against one list's top rank (1/61 ≈ 0.016; ranks 1 and 5 differ by 0.0012),
# and its half-life in days: this week's entry gains a few places, never a dozen.
RECENCY_WEIGHT = 0.001
HALF_LIFE_DAYS = 90.0


def fuse(
    text_ids: Sequence[int],
    vector_hits: Sequence[tuple[int, float]],
    timestamps: Mapping[int, float],
    now: float,
) -> list[tuple[int, float]]:
    """(entry id, fused score) best first, from the full-text ranking and (id, cosine) pairs."""
    vector_ids = [entry_id for entry_id, cosine in vector_hits if cosine >= MIN_COSINE]
    scores: dict[int, float] = {}
    for rank, entry_id in enumerate(text_ids, start=1):
        scores[entry_id] = scores.get(entry_id, 0.0) + 1.0 / (RRF_K + rank)
    for rank, entry_id in enumerate(vector_ids, start=1):
        scores[entry_id] = scores.get(entry_id, 0.0) + 1.0 / (RRF_K + rank)
    for entry_id in scores:
        age_days = max(now - timestamps.get(entry_id, now), 0.0) / 86400
        scores[entry_id] += RECENCY_WEIGHT * math.exp(-age_days * math.log(2) / HALF_LIFE_DAYS)
    return sorted(scores.items(), key=lambda item: -item[1])
