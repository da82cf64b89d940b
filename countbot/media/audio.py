"""Audio in any format a platform sends, turned into what recognizers take: 16 kHz mono PCM.

ffmpeg decodes OGG/Opus (Telegram, WhatsApp-style notes), AMR (Feishu, DingTalk, WeCom), M4A/AAC,
MP3, WAV, FLAC and WebM (the browser's recorder); SILK (QQ, WeChat) is decoded by the `voice`
extra's `silk-python` in a child first. ffmpeg reads only the demuxers listed below from a private
temporary file, so a playlist or concat file posing as audio cannot make it open other files or
URLs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import PurePath

from countbot.media.child import JobFailed, run_job, run_program

RATE = 16_000
DECODE_TIME_LIMIT = 60.0  # seconds for ffmpeg to decode at most an hour of audio
BYTES_PER_SECOND = RATE * 2
_SILK_RATE = "24000"
_DEMUXERS = "ogg,matroska,webm,mov,mp4,m4a,3gp,wav,mp3,amr,flac,aac"
AUDIO_SUFFIXES = frozenset(
    {".ogg", ".oga", ".opus", ".mp3", ".m4a", ".aac", ".wav", ".amr", ".silk", ".slk", ".flac"}
    | {".webm", ".weba", ".spx"}
)
# First bytes of the containers above (for files sent without a usable type or name).
_MAGIC = (b"OggS", b"#!AMR", b"#!SILK_V3", b"\x02#!SILK_V3", b"fLaC", b"ID3", b"\x1aE\xdf\xa3")


class AudioRefused(Exception):
    """This audio cannot be transcribed; the message tells the user why."""


@dataclass(frozen=True, slots=True)
class Pcm:
    """16 kHz mono signed 16-bit little-endian samples."""

    data: bytes

    @property
    def seconds(self) -> float:
        return len(self.data) / BYTES_PER_SECOND


def is_audio(name: str, media_type: str, kind: str, head: bytes) -> bool:
    """Whether a received file is sound: the platform said so, or its name or bytes do."""
    if kind in ("voice", "audio", "record") or media_type.startswith("audio/"):
        return True
    if PurePath(name).suffix.lower() in AUDIO_SUFFIXES:
        return True
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return True
    return head.startswith(_MAGIC) or (head[4:8] == b"ftyp" and b"M4A" in head[8:12])


def is_silk(head: bytes) -> bool:
    return head.startswith((b"#!SILK_V3", b"\x02#!SILK_V3"))


async def to_pcm(data: bytes, *, max_seconds: float, time_limit: float) -> Pcm:
    """Decode `data` (any format above) to PCM; raises `AudioRefused` with the reason."""
    try:
        if is_silk(data[:16]):
            raw = await run_job("silk", data, time_limit=time_limit)
            pcm = await _ffmpeg(["-f", "s16le", "-ar", _SILK_RATE, "-ac", "1"], raw, max_seconds)
        else:
            pcm = await _ffmpeg(["-format_whitelist", _DEMUXERS], data, max_seconds)
    except JobFailed as exc:
        raise AudioRefused(str(exc)) from None
    if not pcm.data:
        raise AudioRefused("no sound could be decoded from it")
    if pcm.seconds > max_seconds:
        raise AudioRefused(f"it is longer than the {max_seconds:.0f} s that can be transcribed")
    return pcm


async def _ffmpeg(input_options: list[str], data: bytes, max_seconds: float) -> Pcm:
    """Run ffmpeg on `data` written to a private temporary file (MP4 needs to seek)."""
    path = await asyncio.to_thread(_temporary, data)
    command = [
        "ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error",
        "-protocol_whitelist", "file", *input_options, "-i", path,
        # A little past the limit, so "too long" is known without decoding an hour.
        "-t", f"{max_seconds + 1:.0f}", "-ar", str(RATE), "-ac", "1", "-f", "s16le", "pipe:1",
    ]  # fmt: skip
    try:
        return Pcm(await run_program(command, b"", time_limit=DECODE_TIME_LIMIT))
    except JobFailed as exc:
        if "not installed" in str(exc):
            raise JobFailed(f"{exc} (Debian/Ubuntu: apt install ffmpeg)") from None
        raise JobFailed(f"it is not audio ffmpeg can read ({exc})") from None
    finally:
        await asyncio.to_thread(_remove, path)


def _temporary(data: bytes) -> str:
    handle, path = tempfile.mkstemp(prefix="countbot-audio-")
    with os.fdopen(handle, "wb") as file:
        file.write(data)
    return path


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
