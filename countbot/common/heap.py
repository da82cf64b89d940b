"""How glibc's malloc should place big blocks, in the daemon and in its children alike.

glibc maps a block of `MMAP_THRESHOLD` bytes or more on its own and unmaps it when freed, but by
default it raises that threshold to the size of each such block freed (up to 32 MiB): after a few
turns, a turn's big buffers (a model request, a long tool result's copies) are carved from the
heap, and what they leave free between smaller blocks that live on is not given back, so a
process grows with the work it did (docs/soak.md). A threshold set explicitly stays where it is.
The daemon sets it at its first turn (`speedups/heap_trim.py`: ctypes, which reaches `mallopt`,
is not loaded while it is idle); its children get it from their environment at start.
"""

from __future__ import annotations

MMAP_THRESHOLD = 128 * 1024
# glibc reads this at a process's start; elsewhere (musl, macOS) it is ignored.
CHILD_ENV = {"MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD)}
