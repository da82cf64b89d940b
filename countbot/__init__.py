"""CountBot: a personal AI assistant daemon."""

__version__ = "0.1.0"  # the package's version (pyproject.toml reads it from here)

# First, before anything imports httpx or PyYAML: what no process of ours uses stays out.
import countbot.speedups.stubs  # noqa: F401
