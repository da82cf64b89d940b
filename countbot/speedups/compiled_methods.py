"""Dataclass methods compiled once, not at every start of a one-shot command.

`dataclasses` writes each method it generates (`__init__`, `__repr__`, `__eq__`, a frozen class's
`__hash__`, `__setattr__` and `__delattr__`) as source text and compiles it with `exec`: hundreds of
methods and a sixth of the CPU of `countbot chat -m`'s imports (docs/cold_start.md). While
`reused_methods` is open, `dataclasses` compiles through here instead: the code of a text compiled
by an earlier run is read back from a file in the data folder's cache (the source text is the key,
the code `marshal`led as in a .pyc, under Python's magic number), and the texts compiled anew are
added to the file at the end. The functions made are the same: only the compile is skipped. The file
is derived data: one that does not read back is ignored and made again, and it lives in the data
folder, which the sandbox hides, as the daemon's database does. Only short-lived commands use it:
the daemon would keep the table in memory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import marshal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from countbot.common.atomic_write import replace_bytes

# The code is Python's own format: another interpreter or optimisation level starts over.
_HEADER = importlib.util.MAGIC_NUMBER + bytes([sys.flags.optimize])
# Texts of methods that no longer exist stay in the file until it holds this many.
MAX_TEXTS = 5000


def cache_file(cache_dir: Path) -> Path:
    """Where the compiled methods of this interpreter are kept in `cache_dir`."""
    return cache_dir / f"dataclass-methods.{sys.implementation.cache_tag}.marshal"


@contextlib.contextmanager
def reused_methods(cache_dir: Path) -> Iterator[None]:
    """While open, dataclasses made (in any thread) reuse the code compiled by earlier runs;
    on leaving, what was compiled anew is written to `cache_dir` (when it can be)."""
    path = cache_file(cache_dir)
    table = _MethodTable(_read(path))
    before = dataclasses.__dict__.get("exec")
    # `dataclasses` calls `exec` by name: a module global of that name is found before the
    # builtin, for its calls only.
    dataclasses.exec = table.exec  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if before is None:
            del dataclasses.exec  # type: ignore[attr-defined]
        else:
            dataclasses.exec = before  # type: ignore[attr-defined]
        if table.compiled:
            _write(path, table.to_keep(_read(path)))


class _MethodTable:
    """The compiled methods read from the file (each let go once used: the process keeps
    no second copy) and those compiled in this run."""

    def __init__(self, known: dict[str, bytes]) -> None:
        self._known = known
        self.compiled: dict[str, bytes] = {}
        self._used: set[int] = set()  # hashes of the texts read back

    def exec(self, source: Any, globals: dict[str, Any] | None = None, locals: Any = None) -> None:
        """`exec(source, globals, locals)`, the compile of a text skipped when it is known."""
        if not isinstance(source, str):
            exec(source, globals, locals)
            return
        packed = self._known.pop(source, None)
        if packed is not None:
            code = marshal.loads(packed)
            self._used.add(hash(source))
        else:
            # As `exec` compiles a text called from `dataclasses`: no future flags of ours.
            code = compile(source, "<string>", "exec", dont_inherit=True)
            if hash(source) not in self._used:  # not a second class with the same method
                self.compiled[source] = marshal.dumps(code)
        exec(code, globals, locals)

    def to_keep(self, stored: dict[str, bytes]) -> dict[str, bytes]:
        """What the file (now holding `stored`) should hold next: all of it and what was
        compiled, unless past `MAX_TEXTS` (methods of classes since changed pile up); then
        only what this run used."""
        kept = {**stored, **self.compiled}
        if len(kept) > MAX_TEXTS:
            kept = {k: v for k, v in kept.items() if k in self.compiled or hash(k) in self._used}
        return kept


def _read(path: Path) -> dict[str, bytes]:
    try:
        data = path.read_bytes()
        if not data.startswith(_HEADER):
            return {}
        table = marshal.loads(data[len(_HEADER) :])
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, str) and isinstance(v, bytes)}


def _write(path: Path, table: dict[str, bytes]) -> None:
    """Replace the file at once (another process may be reading it); a folder that cannot be
    written leaves the methods to be compiled again next time."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_bytes(path, _HEADER + marshal.dumps(table))
