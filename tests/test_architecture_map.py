"""docs/architecture.md is the map a newcomer reads first: it must name every module of
`countbot/`, name nothing that is gone, and stay one page."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAP = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "countbot"
MAX_LINES = 400
INDENT = 2
# A tree line: its names (comma-separated, each a `name/` package or a `name.py` module), and,
# two spaces on, what they hold. A package line may list its modules after the description.
NAMES = re.compile(r"^(?P<names>[\w.]+(?:/|\.py)(?:, [\w.]+\.py)*)(?:  (?P<rest>.*))?$")
MODULE = re.compile(r"\b([\w]+\.py)\b")
FIX = "name the new module in docs/architecture.md's map with one line"


def _tree_lines() -> list[str]:
    """The lines of the fenced block that opens with `countbot/`."""
    lines = MAP.read_text(encoding="utf-8").splitlines()
    start = lines.index("countbot/")
    end = lines.index("```", start)
    return lines[start:end]


def named_modules() -> set[str]:
    """Every module path (relative to the repository) the map's tree names."""
    named: set[str] = set()
    parents: list[str] = []
    for line in _tree_lines():
        stripped = line.lstrip(" ")
        depth = (len(line) - len(stripped)) // INDENT
        match = NAMES.match(stripped)
        assert match, f"map line not in the tree's form (names, two spaces, text): {line!r}"
        del parents[depth:]
        names = match["names"].split(", ")
        if names[0].endswith("/"):
            parents.append(names[0])
            folder = "".join(parents)
            # A package line may name its modules in its text: `telegram/  channel.py, ...`.
            for module in MODULE.findall(re.sub(r"\([^)]*\)", "", match["rest"] or "")):
                named.add(folder + module)
            continue
        folder = "".join(parents)
        named.update(folder + name for name in names)
    return named


def package_modules() -> set[str]:
    """Every module of the package, `__init__.py` only where it holds more than a docstring."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(ROOT).as_posix()
        if path.name == "__init__.py" and not _holds_code(path):
            continue
        found.add(relative)
    return found


def _holds_code(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    body = re.sub(r'^\s*(""".*?"""|\'\'\'.*?\'\'\')', "", text, count=1, flags=re.S)
    return any(line.strip() and not line.lstrip().startswith("#") for line in body.splitlines())


def test_every_module_is_on_the_map() -> None:
    missing = sorted(package_modules() - named_modules())
    assert not missing, f"{FIX}: " + ", ".join(missing)


def test_the_map_names_no_module_that_is_gone() -> None:
    gone = sorted(named_modules() - package_modules())
    assert not gone, "docs/architecture.md's map names modules that are gone: " + ", ".join(gone)


def test_the_map_is_one_page() -> None:
    lines = len(MAP.read_text(encoding="utf-8").splitlines())
    assert lines < MAX_LINES, (
        f"docs/architecture.md has {lines} lines (under {MAX_LINES}): move detail to "
        "docs/internals/, figures to the bench docs, reasons to docs/decisions/"
    )
