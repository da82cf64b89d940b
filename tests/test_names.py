"""One name, one thing: no public class, function or type alias is defined at module level in two
modules of `countbot/` (issue 39), so a reader who meets a name knows which one is meant.

A private helper (`_name`) is seen only inside its module and is not counted. A name may be
re-exported through a module's `__all__`. The few names below are one role that every module of
a family fills in its own way, looked up by the same name on purpose.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "countbot"

# name -> (the modules that share it, why it is one role and not two things)
ONE_ROLE: dict[str, tuple[frozenset[str], str]] = {
    "to_incoming": (
        frozenset(
            {
                "channels/dingtalk/events.py",
                "channels/discord/events.py",
                "channels/email/mail_in.py",
                "channels/feishu/events.py",
                "channels/qq/events.py",
                "channels/slack/events.py",
                "channels/telegram/updates.py",
                "channels/wecom/events.py",
            }
        ),
        "each platform's event -> `Incoming` converter (channels/kit/platform.py)",
    ),
    "Download": (
        frozenset({"channels/feishu/events.py", "channels/wecom/events.py"}),
        "the platform's attachment download its `to_incoming` is handed",
    ),
    "call": (
        frozenset(
            {"channels/discord/client.py", "channels/slack/api.py", "channels/telegram/output.py"}
        ),
        "the one call into the platform's HTTP API in that platform's client module",
    ),
    "main": (
        frozenset({"cli/__init__.py", "local_model/server_main.py", "media/worker.py"}),
        "a process's entry point (`python -m` or the `countbot` script)",
    ),
    "serve": (
        frozenset({"llm/token_worker.py", "memory_index/vector_worker.py"}),
        "a worker process's request loop on its stdin and stdout",
    ),
    "routes": (
        frozenset({"web/api/cron.py", "web/api/subagents.py", "web/api/triggers.py"}),
        "a web API module's routes, mounted by web/api/__init__.py",
    ),
}

# A module-level assignment counts when it names a type (CapWords), not a constant or a value.
_TYPE_NAME = re.compile(r"^[A-Z][a-z0-9]")


def _defined(tree: ast.Module) -> set[str]:
    exported: set[str] = set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
            continue
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            if target.id == "__all__" and isinstance(node.value, (ast.List, ast.Tuple)):
                exported |= {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
            elif _TYPE_NAME.match(target.id):
                names.add(target.id)
    assigned_exports = exported - {
        n.name
        for n in tree.body
        if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    }
    return {name for name in names - assigned_exports if not name.startswith("_")}


def _definitions() -> dict[str, set[str]]:
    where: dict[str, set[str]] = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        for name in _defined(ast.parse(path.read_text(encoding="utf-8"))):
            where[name].add(module)
    return where


def test_no_public_name_is_defined_in_two_modules() -> None:
    twins = {
        name: sorted(modules)
        for name, modules in _definitions().items()
        if len(modules) > 1 and modules != ONE_ROLE.get(name, (frozenset(),))[0]
    }
    assert twins == {}, "rename one of each (or, for one role, list it in ONE_ROLE with why)"


def test_every_shared_role_still_exists() -> None:
    """An allowance for a name no longer shared is removed, so the list stays true."""
    where = _definitions()
    stale = [name for name, (modules, _) in ONE_ROLE.items() if where.get(name) != set(modules)]
    assert stale == []
