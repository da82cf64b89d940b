"""The parts of uvicorn the daemon uses, imported without uvicorn's package `__init__`.

`import uvicorn` (and so any `import uvicorn.server`, which runs the package first) imports its
command line, `uvicorn.main`, and through it the reloaders and workers: watchfiles (a Rust
extension, with anyio) and multiprocessing, memory and start-up time a daemon never uses
(docs/cold_start.md). So the package is entered here as a plain package module whose `__path__`
finds the submodules. A name it lacks is a submodule imported on demand (`Config` resolves its log
formatter as `uvicorn.logging.DefaultFormatter`), else (`uvicorn.run`, `__version__`) the real
`__init__` runs once, so other code that imports uvicorn still sees the whole package.

The WebSocket protocol (websockets' sans-I/O one, which uvicorn's "auto" picks) is imported here
too, without `importlib.metadata`, and uvicorn's config without `logging.config`
(`lean_imports`): the daemon passes no `log_config` and sets uvicorn's default log handler
itself (`log_as_uvicorn`).
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from typing import Any

from countbot.speedups.lean_imports import import_without


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


_enter_package()
# websockets' version module imports importlib.metadata for a development checkout's version.
import_without("importlib.metadata", "websockets")
# uvicorn's config imports logging.config for a `log_config`, which the daemon does not pass.
import_without("logging.config", "uvicorn.config")

from uvicorn.config import Config  # noqa: E402
from uvicorn.logging import DefaultFormatter  # noqa: E402
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol  # noqa: E402
from uvicorn.protocols.websockets.websockets_sansio_impl import (  # noqa: E402
    WebSocketsSansIOProtocol,
)
from uvicorn.server import Server  # noqa: E402


def log_as_uvicorn() -> None:
    """What uvicorn's default `log_config` sets up (without its access log, which the daemon
    turns off), for a `Config(log_config=None)`: its `dictConfig` needs logging.config."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(DefaultFormatter("%(levelprefix)s %(message)s", use_colors=None))
    logger = logging.getLogger("uvicorn")
    logger.handlers = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logging.getLogger("uvicorn.error").setLevel(logging.INFO)


# As the real `__init__` has them: uvicorn's own modules import these from the package.
sys.modules["uvicorn"].Config = Config  # type: ignore[attr-defined]
sys.modules["uvicorn"].Server = Server  # type: ignore[attr-defined]

__all__ = ["Config", "HttpToolsProtocol", "Server", "WebSocketsSansIOProtocol", "log_as_uvicorn"]
