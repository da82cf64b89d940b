"""The parts of uvicorn the daemon uses, imported without uvicorn's package `__init__`.

`import uvicorn` (and so any `import uvicorn.server`, which runs the package first) imports its
command line, `uvicorn.main`, and through it the reloaders and workers: watchfiles (a Rust
extension, with anyio) and multiprocessing, about 2 MB and 30 ms a daemon never uses. So the
package is entered here as a plain package module whose `__path__` finds the submodules. A name
it lacks is a submodule imported on demand (`Config` resolves its log formatter as
`uvicorn.logging.DefaultFormatter`), else (`uvicorn.run`, `__version__`) the real `__init__` runs
once, so other code that imports uvicorn still sees the whole package.

The WebSocket protocol (websockets' sans-I/O one, which uvicorn's "auto" picks) is imported here
too, without the `importlib.metadata` that websockets' `version` module imports for a
development checkout's version only (with email, zipfile and csv: about 1.5 MB of an idle daemon).
"""

from __future__ import annotations

import importlib.util
import sys
import types
from typing import Any


def _enter_package() -> None:
    if "uvicorn" in sys.modules:
        return
    spec = importlib.util.find_spec("uvicorn")
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def missing(name: str) -> Any:
        # `main` and `run` are the real __init__'s functions (`uvicorn.main` is also a module).
        if not name.startswith("__") and name not in ("main", "run"):
            try:
                return importlib.import_module(f"uvicorn.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"uvicorn.{name}":
                    raise
        del package.__getattr__  # type: ignore[attr-defined]
        loader.exec_module(package)
        return getattr(package, name)

    package.__getattr__ = missing  # type: ignore[attr-defined]
    sys.modules["uvicorn"] = package


def _import_websockets() -> None:
    """Import websockets with a stand-in for `importlib.metadata`, dropped once it is imported.

    A released websockets only imports the module. Should anything use the stand-in (websockets,
    or another thread in that moment), it hands over to the real module, imported then.
    """
    name = "importlib.metadata"
    if "websockets" in sys.modules or name in sys.modules:
        return
    stand_in = types.ModuleType(name)

    def forward(attribute: str) -> Any:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]
        return getattr(importlib.import_module(name), attribute)

    stand_in.__getattr__ = forward  # type: ignore[attr-defined]
    sys.modules[name] = stand_in
    try:
        import websockets  # noqa: F401
    finally:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]


_enter_package()
_import_websockets()

from uvicorn.config import Config  # noqa: E402
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol  # noqa: E402
from uvicorn.protocols.websockets.websockets_sansio_impl import (  # noqa: E402
    WebSocketsSansIOProtocol,
)
from uvicorn.server import Server  # noqa: E402

# As the real `__init__` has them: uvicorn's own modules import these from the package.
sys.modules["uvicorn"].Config = Config  # type: ignore[attr-defined]
sys.modules["uvicorn"].Server = Server  # type: ignore[attr-defined]

__all__ = ["Config", "HttpToolsProtocol", "Server", "WebSocketsSansIOProtocol"]
