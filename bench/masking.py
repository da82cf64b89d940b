"""How fast secrets are masked: MB/s of SecretMasker.mask on ordinary tool output, on a base64
blob, on output full of secrets, and on hostile inputs built to make regexes backtrack, with no
registered secret and with five (each adds its base64 forms).

    python bench/masking.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from countbot.common.masking import SecretMasker

MB = 1_000_000


def inputs() -> dict[str, str]:
    log = "2026-11-23 12:00:01 INFO GET /api/items?page=2 200 12ms user=alice ok\n"
    blob = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAx" * 14 + "\n"
    secrets = "export OPENAI_API_KEY=sk-proj-0123456789abcdefghijABCDEFGHIJ # and ghp_" + (
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ\n"
    )
    return {
        "log lines": (log * (MB // len(log) + 1))[:MB],
        "base64 blob": (blob * (MB // len(blob) + 1))[:MB],
        "full of secrets": (secrets * (MB // len(secrets) + 1))[:MB],
        "hostile: sk-aaaa…": "sk-" + "a" * (MB - 3),
        "hostile: eyJ-eyJ-…": "eyJ-" * (MB // 4),
        "hostile: a://b:a://b:…": "a://b:" * (MB // 6),
        "hostile: token×N": "token" * (MB // 5),
    }


def mb_per_s(masker: SecretMasker, text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        masker.mask(text)
        times.append(time.perf_counter() - start)
    return len(text) / MB / statistics.median(times)


def main(repeat: int) -> None:
    plain = SecretMasker()
    known = SecretMasker([f"registered-secret-value-{i:02d}-abcdefgh" for i in range(5)])
    print(f"MB/s of SecretMasker.mask on 1 MB inputs (median of {repeat})")
    print(f"{'input':<24} {'no known':>9} {'5 known':>9} {'ratio':>6}")
    for name, text in inputs().items():
        a, b = mb_per_s(plain, text, repeat), mb_per_s(known, text, repeat)
        print(f"{name:<24} {a:>9.2f} {b:>9.2f} {b / a:>6.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    main(parser.parse_args().repeat)
