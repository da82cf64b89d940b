"""Skills written in the frontmatter shapes of other assistants (our own text, their formats).

Each writer puts a skill folder under `root` and returns its path.
"""

from __future__ import annotations

import json
from pathlib import Path


def _write(root: Path, folder: str, frontmatter: str, body: str) -> Path:
    path = root / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(f"---\n{frontmatter}\n---\n{body}\n", encoding="utf-8")
    return path


def openclaw_skill(root: Path) -> Path:
    """OpenClaw: one-line JSON `metadata` with an `openclaw` block, `install` hints."""
    metadata = {
        "openclaw": {
            "emoji": "🗂",
            "primaryEnv": "PAPERS_API_KEY",
            "os": ["linux", "darwin"],
            "requires": {"bins": ["sh"], "anyBins": ["no-such-pdf-tool", "cat"]},
            "install": [
                {"id": "brew", "kind": "brew", "formula": "poppler", "label": "Install poppler"}
            ],
        }
    }
    frontmatter = (
        "name: paper-shelf\n"
        "description: File research papers by topic.\n"
        f"metadata: {json.dumps(metadata)}"
    )
    return _write(root, "paper-shelf", frontmatter, "Sort the papers in papers/ by topic.")


def nanobot_skill(root: Path) -> Path:
    """nanobot: YAML `metadata.nanobot` with `requires.bins`/`env` and `always`."""
    frontmatter = (
        "name: plant-care\n"
        "description: Remind the user to water plants.\n"
        "metadata:\n"
        "  nanobot:\n"
        "    always: false\n"
        "    requires:\n"
        "      bins: [no-such-watering-cli]\n"
        "      env: [PLANT_TOKEN]\n"
        "    install:\n"
        "      - kind: pip\n"
        "        package: watering-cli\n"
    )
    return _write(root, "plant-care", frontmatter, "Check plants.md every morning.")


def clawdbot_skill(root: Path) -> Path:
    """Clawdbot: `metadata.clawdbot` plus top-level invocation flags."""
    frontmatter = (
        "name: release-notes\n"
        "description: Draft release notes from the git log.\n"
        "disable-model-invocation: true\n"
        "user-invocable: true\n"
        'metadata: {"clawdbot": {"requires": {"bins": ["sh"], "config": ["model.name"]}}}'
    )
    body = "Write release notes as three bullet lists: added, changed, fixed. Sign with ~RN~."
    return _write(root, "release-notes", frontmatter, body)


def unknown_vendor_skill(root: Path) -> Path:
    """A vendor we have never heard of: its block is read like the others."""
    frontmatter = (
        "name: windows-only\n"
        "description: Tidy the Windows registry.\n"
        "metadata:\n"
        "  acmebot:\n"
        "    os: [windows]\n"
        "    user-invocable: false\n"
    )
    return _write(root, "windows-only", frontmatter, "Only on Windows.")
