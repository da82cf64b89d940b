"""CountBot: a personal AI assistant daemon."""

import sys

__version__ = "0.1.0"  # the package's version (pyproject.toml reads it from here)

# httpx imports its command-line client at import time when rich, click and pygments are
# installed (they are, for other packages): about 5 MB and a tenth of a second that neither
# `countbot chat -m` nor the daemon uses. None in sys.modules makes that import fail, and httpx
# falls back to a stub `main`. Only ever `httpx.main` (its CLI) is affected.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
