"""numpy, imported once with its BLAS on one thread.

A vector search is one matrix-vector product: memory-bound work that a second BLAS thread does
not speed up, and on a busy two-core machine OpenBLAS's threads fight the daemon and each other
(a 100,000-row search measured 16 ms median, 28 ms p95 with two threads, 7 ms and 10 ms with
one). OpenBLAS reads its thread count when it loads, so the variable is set for the import only
and the daemon's environment (which an unsandboxed command inherits) is left as it was.
"""

from __future__ import annotations

import os
import sys
import threading
from types import ModuleType

_lock = threading.Lock()
_THREADS = "OPENBLAS_NUM_THREADS"


def numpy_module() -> ModuleType:
    """The numpy module (ImportError without the `memory` extra)."""
    loaded = sys.modules.get("numpy")
    if loaded is not None:
        return loaded
    with _lock:
        previous = os.environ.get(_THREADS)
        os.environ[_THREADS] = "1"
        try:
            import numpy
        finally:
            if previous is None:
                os.environ.pop(_THREADS, None)
            else:
                os.environ[_THREADS] = previous
    return numpy
