"""What reading voice notes and documents costs: the offline recognizer (a pocketsphinx child)
on 5, 15 and 60 s of espeak-ng speech, and document conversion (a markitdown child) of 1- and
50-page PDFs and a 50-page DOCX. Each job is one child process, as in the daemon; its peak RSS is
read from `wait4`. The baseline is the same child doing nothing (Python start-up and the
worker's own imports), measured in the same run. Last, the daemon's side: the event loop's worst
stall (`LoopWatch`, 5 ms ticks) while `MediaReader` handles a voice note and a 50-page PDF, against
the loop's worst stall over the same time doing nothing.

    python bench/media.py [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from countbot.config.settings import TranscriptionSettings
from countbot.media.reader import MediaReader
from tests.support import media_files
from tests.support.loop_watch import LoopWatch

WORDS = "what is the weather today " * 40


def run_child(job: list[str], data: bytes) -> tuple[float, float, bytes]:
    """(seconds, peak RSS in MB, stdout) of `python -m countbot.media.worker JOB`."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "countbot.media.worker", *job],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(data)  # the worker reads all of its input before it writes
    child.stdin.close()
    out = child.stdout.read()
    _, _, usage = os.wait4(child.pid, 0)
    child.returncode = 0  # reaped here, so Popen must not wait for it again
    return time.perf_counter() - start, usage.ru_maxrss / 1024, out


def measured(job: list[str], data: bytes, runs: int) -> tuple[float, float]:
    """Median seconds and the largest peak RSS (MB) over `runs` runs."""
    times, peaks = [], []
    for _ in range(runs):
        seconds, rss, _ = run_child(job, data)
        times.append(seconds)
        peaks.append(rss)
    return statistics.median(times), max(peaks)


def speech_pcm(seconds: int) -> bytes:
    """About `seconds` of speech as 16 kHz mono PCM (what the recognizer child reads)."""
    wav = media_files.spoken_wav(WORDS)
    return media_files.converted(
        wav, "-t", str(seconds), "-ar", "16000", "-ac", "1", "-f", "s16le", suffix=".pcm"
    )


def main(runs: int) -> None:
    baseline, base_rss = measured(["none"], b"", runs)
    idle = f"{baseline:.2f} s, {base_rss:.0f} MB peak RSS"
    print(f"baseline: an idle worker child, {idle}; medians of {runs} runs")
    print()
    print("offline transcription (pocketsphinx child, US English model from the wheel)")
    print("audio s   wall s   s per audio s   x baseline   peak RSS MB")
    for seconds in (5, 15, 60):
        pcm = speech_pcm(seconds)
        audio = len(pcm) / 32_000
        wall, rss = measured(["recognize"], pcm, runs)
        ratios = f"{wall / audio:>15.3f} {wall / baseline:>12.1f}"
        print(f"{audio:>7.0f} {wall:>8.2f} {ratios} {rss:>13.0f}")
    print()
    print("document conversion (markitdown child)")
    print("document               bytes   wall s   s per page   x baseline   peak RSS MB")
    line = "The quarterly report lists revenue, costs and the outlook for each region."
    page = "\n".join([line] * 45)  # a full page of 12 pt text
    documents = [
        ("PDF, 1 page", "pdf", media_files.pdf([page]), 1),
        ("PDF, 50 pages", "pdf", media_files.pdf([f"{n}: {page}" for n in range(50)]), 50),
        ("DOCX, 50 pages", "docx", media_files.docx([line] * 45 * 50), 50),
    ]
    for label, kind, data, pages in documents:
        wall, rss = measured(["document", kind], data, runs)
        print(
            f"{label:<16} {len(data):>11,} {wall:>8.2f} {wall / pages:>12.3f} "
            f"{wall / baseline:>12.1f} {rss:>13.0f}"
        )
    asyncio.run(loop_stalls(documents[1][2]))


async def loop_stalls(pdf: bytes) -> None:
    """The loop's worst stall (ms) while the reader works, and idle for as long."""
    reader = MediaReader(TranscriptionSettings())
    voice = media_files.ogg_opus(WORDS[:300])

    async def save(text: str) -> str:
        return "media/bench.md"

    print()
    print("event loop while MediaReader works (the daemon's side; the work is in children)")
    print("work                      wall s   worst stall ms   idle worst stall ms")
    work = [("voice note (OGG/Opus)", voice, "v.ogg"), ("PDF, 50 pages", pdf, "p.pdf")]
    for label, data, name in work:
        start = time.perf_counter()
        async with LoopWatch() as busy:
            await reader.read(data, name=name, media_type="", kind="file", where=name, save=save)
        wall = time.perf_counter() - start
        async with LoopWatch() as idle:
            await asyncio.sleep(wall)
        print(f"{label:<24} {wall:>7.2f} {busy.worst * 1000:>16.1f} {idle.worst * 1000:>21.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    main(parser.parse_args().runs)
