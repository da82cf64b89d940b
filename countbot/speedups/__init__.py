"""Speed machinery, fenced: each trick that makes a start faster or a process smaller lives here,
with why it exists and the bench that justifies it. Everywhere else imports ordinarily.

- `stubs.py`: modules no CountBot process uses are kept out of `sys.modules` (httpx's command
  line, libyaml's bindings). `bench/cold_start.py`, docs/cold_start.md.
- `lean_imports.py`: third-party modules imported without the standard modules they import but
  the daemon never uses. `bench/cold_start.py` (idle daemon's memory), docs/cold_start.md.
- `uvicorn_parts.py`: uvicorn's server without its package `__init__` (command line, reloaders).
  `bench/cold_start.py` (daemon start), docs/cold_start.md.
- `compiled_methods.py`: the methods `dataclasses` generates, compiled once and read back by
  later one-shot commands. `bench/cold_start.py` (`chat -m`), docs/cold_start.md.
- `heap_trim.py`: glibc's `malloc_trim` after a busy spell hands freed arenas back.
  `bench/cold_start.py` (memory after many sessions), docs/cold_start.md.
- `warm_imports.py`: modules a library imports lazily at its first use, imported beforehand in a
  worker thread so the first model call or web request does not import on the event loop.
  `bench/llm_call.py`, `bench/agent_turn.py`, docs/llm_call.md.

Importing this package imports none of them: each is imported by the one place that uses it.
"""
