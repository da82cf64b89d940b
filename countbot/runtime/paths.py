"""Where the files shipped with CountBot live, and seeding a new workspace from them."""

from __future__ import annotations

import shutil
from pathlib import Path

from countbot.config.loader import SHIPPED_ROOT

WORKSPACE_TEMPLATE = SHIPPED_ROOT / "workspace"


def seed_workspace(workspace: Path, template: Path = WORKSPACE_TEMPLATE) -> list[Path]:
    """Copy template files that the workspace lacks; never overwrite what the user has."""
    created: list[Path] = []
    workspace.mkdir(parents=True, exist_ok=True)
    if not template.is_dir() or template.resolve() == workspace.resolve():
        return created
    for source in sorted(template.rglob("*")):
        target = workspace / source.relative_to(template)
        if source.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif not target.exists() and source.name != ".gitkeep":
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
            created.append(target)
    return created
