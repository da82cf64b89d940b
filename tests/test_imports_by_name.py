"""Every import is one an editor, a reader and the layer contracts can see (issue 39): no module
of `countbot/` imports a module named by a string (`importlib.import_module`, `__import__`, a
spec handed to a loader), except the fenced speed machinery (`countbot/speedups/`) and the true
plug-in points listed below with why."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "countbot"
FENCE = "speedups/"
# module -> why it imports a module it is told the name of
PLUG_INS = {
    "memory_index/vector_worker.py": (
        "the embedding model's loader is named by the daemon's `Embedder` as data ('module:name'"
        " crossing into the worker process); benches plug candidate models in the same way"
    ),
    "memory_index/mapped_model.py": (
        "a deserializer: the cache file names the classes of the model's own package to rebuild"
        " (as pickle's find_class does), refused for any other package"
    ),
}
# Calls that import a module from its name, or run a module the loader was handed by path.
BY_NAME = {"import_module", "__import__", "module_from_spec", "exec_module"}
BY_NAME |= {"spec_from_file_location", "spec_from_loader", "run_module", "run_path"}


def _imports_by_name(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in BY_NAME:
                lines.append(node.lineno)
        if isinstance(node, ast.ImportFrom) and any(a.name in BY_NAME for a in node.names):
            lines.append(node.lineno)  # `from importlib import import_module`, then a bare call
    return lines


def test_no_module_imports_another_by_its_name() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module.startswith(FENCE) or module in PLUG_INS:
            continue
        found += [f"{module}:{line}" for line in _imports_by_name(ast.parse(path.read_text()))]
    assert found == [], "import it ordinarily (a function-local import is fine), or fence it"


def test_every_plug_in_point_still_imports_by_name() -> None:
    """A plug-in point that no longer loads by name leaves the list, so the list stays true."""
    idle = [m for m in PLUG_INS if not _imports_by_name(ast.parse((PACKAGE / m).read_text()))]
    assert idle == []
