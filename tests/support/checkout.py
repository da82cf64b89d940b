"""A clean checkout of this repository in a temporary folder, as a new user clones it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from countbot.config.instance import SHIPPED_ROOT


def git(*args: str, cwd: Path) -> str:
    result = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def clean_checkout(target: Path) -> Path:
    """A new repository holding this checkout's files as they are now (tracked, and new ones
    git would add), committed."""
    if shutil.which("git") is None or not (SHIPPED_ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=SHIPPED_ROOT)
    for name in filter(None, listed.split("\0")):
        source = SHIPPED_ROOT / name
        if source.is_file():  # a file deleted in the working tree is not copied
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    git("init", "-q", cwd=target)
    git("add", "-A", cwd=target)
    git("commit", "-qm", "clean copy", cwd=target)
    return target
