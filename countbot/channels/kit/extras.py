"""Platform SDKs are optional extras: a channel enabled without its SDK says how to install it."""

from __future__ import annotations

import importlib.util


def missing_extra(module: str, extra: str) -> str | None:
    """None when `module` is importable, else the exact command that installs it."""
    if importlib.util.find_spec(module) is None:
        return f"the {module} package is missing: run  pip install 'countbot[{extra}]'"
    return None
