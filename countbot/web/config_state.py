"""What the daemon last found in its config file, for the UI and the log (see config_watch)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class ConfigState:
    """What the last look at the file found: `error` (the running settings were kept because of
    it) and the changed sections that wait for a restart."""

    error: str = ""
    restart: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {"error": self.error, "restart": list(self.restart)}
