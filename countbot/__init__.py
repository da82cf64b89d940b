"""CountBot: a personal AI assistant daemon."""

import sys

__version__ = "0.1.0"  # the package's version (pyproject.toml reads it from here)

# httpx imports its command-line client at import time when rich, click and pygments are
# installed (they are, for other packages): about 5 MB and a tenth of a second that neither
# `countbot chat -m` nor the daemon uses. None in sys.modules makes that import fail, and httpx
# falls back to a stub `main`. Only ever `httpx.main` (its CLI) is affected.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

# PyYAML loads libyaml's bindings (its `_yaml` extension, about 0.7 MB of every process) at
# import whether or not a C loader is used, and CountBot uses none: every load is a pure-Python
# `SafeLoader` (`bounded_yaml.BoundedLoader`), every dump `safe_dump`. None makes `yaml.cyaml`
# fail to import, which PyYAML expects (`yaml.__with_libyaml__` is then False).
sys.modules.setdefault("yaml._yaml", None)  # type: ignore[arg-type]
