"""Wall time of `countbot doctor` when the model cannot answer, beside its floor: importing litellm.

The doctor asks the model once, without retries and for at most 10 s, so a model that is down
or failing is reported in about the time the process needs to start. Three cases, each run as a
real `countbot doctor` subprocess, interleaved round by round (drift on a shared machine hits all
alike):

  (a) baseline: `python -c "import litellm"` (every model call in a fresh process pays it);
  (b) a refused connection (nothing listens on the model's port);
  (c) a model server that answers 503 to everything (retried before this change);
  (d) a model server that accepts and never answers (the probe's own 10 s limit ends it).

    python bench/doctor.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.scripted_model import Reply, ScriptedModelServer  # noqa: E402


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def config(folder: Path, name: str, base_url: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(
        f"model:\n  name: openai/bench\n  api_base: {base_url}\n  api_key: sk-bench-0123456789\n"
        f"workspace: {folder / 'ws'}\ndata_dir: {folder / 'data'}\n",
        encoding="utf-8",
    )
    return path


def timed(command: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    subprocess.run(command, env=env, capture_output=True, check=False, timeout=300)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    doctor = [sys.executable, "-m", "countbot", "doctor", "--config"]
    with (
        tempfile.TemporaryDirectory() as tmp,
        ScriptedModelServer(default=Reply.error(503, "overloaded")) as failing,
        ScriptedModelServer(default=Reply.hang(60)) as silent,
    ):
        folder = Path(tmp)
        cases = {
            "import litellm (floor)": [sys.executable, "-c", "import litellm"],
            "refused connection": [
                *doctor,
                str(config(folder, "refused", f"http://127.0.0.1:{free_port()}/v1")),
            ],
            "503 on every call": [*doctor, str(config(folder, "failing", failing.base_url))],
            "never answers": [*doctor, str(config(folder, "silent", silent.base_url))],
        }
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(rounds):
            for name, command in cases.items():
                samples[name].append(timed(command))
        requests = len(failing.requests)
    floor = statistics.median(samples["import litellm (floor)"])
    print(f"countbot doctor, {rounds} rounds, load average {os.getloadavg()[0]:.1f}")
    print(f"{'case':<26}{'median s':>10}{'max s':>9}{'vs floor':>10}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:<26}{median:>10.2f}{max(values):>9.2f}{median / floor:>9.2f}x")
    print(f"requests the 503 server got: {requests} in {rounds} runs (one per run: no retries)")


if __name__ == "__main__":
    main()
