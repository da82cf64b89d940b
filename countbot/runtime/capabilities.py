"""What this install can do, and how to turn on what it cannot: the model, memory by meaning,
documents, voice notes and the sandbox. The first page a user sees and `countbot doctor` show
the same list.

Each one is judged without importing its heavy library (a module spec, a program on PATH, the
sandbox's probe), so asking costs an idle daemon nothing it would keep.
"""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import asdict, dataclass
from typing import Literal

from countbot.config.settings import Settings
from countbot.execution.sandbox import SandboxStatus
from countbot.local_model.models import effective_model, embedded_default
from countbot.memory_index.embeddings import offline_model_available, vectors_available

Key = Literal["model", "memory", "documents", "voice", "sandbox"]
# How the command line names them (the web UI has its own words, in each language).
CAPABILITY_NAMES: dict[Key, str] = {
    "model": "model",
    "memory": "memory by meaning",
    "documents": "documents",
    "voice": "voice notes",
    "sandbox": "sandbox",
}
# What the README's first command installs; one extra alone turns on one capability.
_INSTALL = "pip install -e '.[{extra}]' (in the CountBot checkout)"


@dataclass(frozen=True, slots=True)
class Capability:
    """One capability: whether it is on, what serves it, and how to turn it on when it is off
    (or better, for the built-in model)."""

    key: Key
    on: bool
    detail: str
    hint: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def capabilities(settings: Settings, sandbox: SandboxStatus) -> list[Capability]:
    """Every capability, in the order the page shows them. Blocking (stats files, looks up
    programs on PATH): call it in a thread."""
    return [
        _model(settings),
        _memory(settings),
        _documents(),
        _voice(settings),
        _sandbox(sandbox),
    ]


def _model(settings: Settings) -> Capability:
    name = effective_model(settings.model, settings.data_dir)
    if not name:
        return Capability(
            "model",
            False,
            "no model configured",
            "set one on the Settings page (model.name), or run the built-in one: "
            "pip install -e '.[local]' && countbot models pull smollm2-135m",
        )
    if embedded_default(settings.model, settings.data_dir):
        return Capability(
            "model",
            True,
            f"{name}, built in: basic answers only",
            "set a real model on the Settings page for useful answers",
        )
    return Capability("model", True, name)


def _memory(settings: Settings) -> Capability:
    mode = settings.memory.embeddings
    if mode == "off":
        return Capability(
            "memory", False, "memory.embeddings is off", "set memory.embeddings: use-multilingual"
        )
    if not vectors_available() or (mode == "use-multilingual" and not offline_model_available()):
        return Capability(
            "memory",
            False,
            "full-text search only",
            _INSTALL.format(extra="memory"),
        )
    if mode == "endpoint":
        if not settings.memory.embeddings_url:
            return Capability("memory", False, "no memory.embeddings_url", "set it in the config")
        return Capability("memory", True, f"embeddings from {settings.memory.embeddings_url}")
    return Capability("memory", True, "Universal Sentence Encoder (multilingual), offline")


def _documents() -> Capability:
    if importlib.util.find_spec("markitdown") is None:
        return Capability(
            "documents", False, "PDF, DOCX, XLSX, PPTX not read", _INSTALL.format(extra="documents")
        )
    return Capability("documents", True, "PDF, DOCX, XLSX, PPTX and HTML as text")


def _voice(settings: Settings) -> Capability:
    transcription = settings.transcription
    if not transcription.enabled:
        return Capability("voice", False, "transcription is off", "set transcription.enabled")
    missing = []
    if transcription.api_base:
        serves = f"transcribed by {transcription.api_base}"
    elif importlib.util.find_spec("pocketsphinx") is None:
        serves = ""
        missing.append(_INSTALL.format(extra="voice"))
    else:
        serves = "transcribed offline (pocketsphinx, English)"
    if shutil.which("ffmpeg") is None:
        missing.append("apt install ffmpeg")
    if missing:
        return Capability("voice", False, "voice notes not transcribed", "; ".join(missing))
    return Capability("voice", True, serves)


def _sandbox(status: SandboxStatus) -> Capability:
    if status.active:
        return Capability("sandbox", True, f"exec runs in bubblewrap ({status.detail})")
    hint = "set tools.exec.sandbox: auto" if status.mode == "off" else "apt install bubblewrap"
    return Capability("sandbox", False, f"exec is not sandboxed: {status.detail}", hint)
