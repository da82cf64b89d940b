"""Modules no CountBot process uses, kept out of every process (`countbot/__init__.py` imports
this first). `None` in `sys.modules` makes their import fail, which both libraries expect.

Measured by `bench/cold_start.py` (docs/cold_start.md: "httpx without its command line", "PyYAML
without libyaml").
"""

from __future__ import annotations

import sys

# httpx imports its command-line client at import time when rich, click and pygments are
# installed (they are, for other packages), and neither `countbot chat -m` nor the daemon uses
# it; httpx then falls back to a stub `main`. Only ever `httpx.main` (its CLI) is affected.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

# PyYAML loads libyaml's bindings (its `_yaml` extension) at import whether or not a C loader is
# used, and CountBot uses none: every load is a pure-Python `SafeLoader`
# (`bounded_yaml.BoundedLoader`), every dump `safe_dump`. `yaml.__with_libyaml__` is then False.
sys.modules.setdefault("yaml._yaml", None)  # type: ignore[arg-type]
