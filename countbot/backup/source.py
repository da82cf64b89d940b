"""Which files of an instance a backup takes, read from its settings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from countbot.config.instance import SHIPPED_ROOT
from countbot.config.secrets_file import secrets_path
from countbot.config.settings import Settings
from countbot.local_model.catalogue import CATALOGUE
from countbot.local_model.models import models_dir

# SQLite files copied through the online backup API (consistent while the daemon writes).
DATABASES = ("countbot.db", "memory_index.db")
AUDIT_LOG = "audit.jsonl"


@dataclass(frozen=True, slots=True)
class Instance:
    """The parts of one instance a backup reads."""

    config: Path | None
    secrets: Path | None
    data_dir: Path
    workspace: Path
    # Custom skills and personas folders; None when the shipped ones are used (not the user's).
    skills: Path | None
    personas: Path | None
    models: Path

    @classmethod
    def of(cls, settings: Settings) -> Instance:
        config = settings.config_path
        return cls(
            config=config,
            secrets=secrets_path(config) if config is not None else None,
            data_dir=settings.data_dir,
            workspace=settings.workspace,
            skills=_own(settings.skills_dir, "skills"),
            personas=_own(settings.personas_dir, "personas"),
            models=models_dir(settings.model, settings.data_dir),
        )

    def local_models(self) -> list[dict[str, object]]:
        """The pulled GGUF files, named as the catalogue names them: pulled again, not copied."""
        if not self.models.is_dir():
            return []
        names = {entry.file: entry.name for entry in CATALOGUE}
        return [
            {"file": path.name, "size": path.stat().st_size, "catalogue": names.get(path.name)}
            for path in sorted(self.models.glob("*.gguf"))
            if path.is_file()
        ]


def _own(folder: Path | None, shipped: str) -> Path | None:
    if folder is None or folder.resolve() == (SHIPPED_ROOT / shipped).resolve():
        return None
    return folder
