"""Third-party modules the daemon imports without the standard modules they import unused.

Some libraries import a standard module at the top for a path the daemon never takes: websockets'
version module imports `importlib.metadata` for a development checkout's version, uvicorn's config
imports `logging.config` for a `log_config` (the daemon passes none), starlette's exceptions import
`http.client` for its table of status phrases, its error middleware `html` for a debug page. With
their own imports (email's parser and message, zipfile, csv, logging.handlers, pickle, socketserver)
they are a share of an idle daemon's memory (docs/cold_start.md). `import_without` imports such a
library while a stand-in takes the unused module's place; the stand-in forwards to the real module
should anything use it.

This module runs before anything imports starlette: `countbot.web.daemon` imports it first.
"""

from __future__ import annotations

import http
import importlib
import sys
import types
from typing import Any


def import_without(unused: str, importing: str, **kept: Any) -> None:
    """Import module `importing` with a stand-in for module `unused`, which it imports unused.

    `kept` are attributes the stand-in answers itself, as the real module has them. The stand-in
    stays the parent package's attribute; anything that uses another of its attributes (or that
    imports `unused` later) gets the real module, imported then.
    """
    if importing in sys.modules or unused in sys.modules:
        return
    parent, _, child = unused.rpartition(".")
    stand_in = types.ModuleType(unused)

    def forward(attribute: str) -> Any:
        if sys.modules.get(unused) is stand_in:
            del sys.modules[unused]
        return getattr(importlib.import_module(unused), attribute)

    stand_in.__getattr__ = forward  # type: ignore[attr-defined]
    vars(stand_in).update(kept)
    sys.modules[unused] = stand_in
    if parent:
        setattr(importlib.import_module(parent), child, stand_in)
    try:
        importlib.import_module(importing)
    finally:
        if sys.modules.get(unused) is stand_in:
            del sys.modules[unused]


# Starlette uses only `http.client.responses`, which http.client builds exactly so.
import_without(
    "http.client",
    "starlette.exceptions",
    responses={status.value: status.phrase for status in http.HTTPStatus.__members__.values()},
)
# Starlette's error middleware uses `html.escape` only for its debug page (the daemon's is off);
# the html package's entity table is large.
import_without("html", "starlette.middleware.errors")
