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
# Weight of recency against one list's top rank (1/61 ≈ 0.016; ranks 1 and 5 differ by 0.0012),
# and its half-life in days: this week's entry gains a few places, never a dozen.
RECENCY_WEIGHT = 0.001
HALF_LIFE_DAYS = 90.0


def fuse(
    text_ids: Sequence[int],
    vector_ids: Sequence[int],
    timestamps: Mapping[int, float],
    now: float,
) -> list[tuple[int, float]]:
    """(entry id, fused score) best first, from the full-text and vector rankings (best first).

    Every vector candidate counts, however low its cosine: with static embeddings a paraphrase
    often scores under 0.3 and is still the nearest entry.
    """
    scores: dict[int, float] = {}
    for rank, entry_id in enumerate(text_ids, start=1):
        scores[entry_id] = scores.get(entry_id, 0.0) + 1.0 / (RRF_K + rank)
    for rank, entry_id in enumerate(vector_ids, start=1):
        scores[entry_id] = scores.get(entry_id, 0.0) + 1.0 / (RRF_K + rank)
    for entry_id in scores:
        age_days = max(now - timestamps.get(entry_id, now), 0.0) / 86400
        scores[entry_id] += RECENCY_WEIGHT * math.exp(-age_days * math.log(2) / HALF_LIFE_DAYS)
    return sorted(scores.items(), key=lambda item: -item[1])
