"""Spoken replies: an answer as an OGG/Opus voice note, by an OpenAI-compatible `/audio/speech`
endpoint or, offline, by espeak-ng (when installed; GPL-3 but a separate program we only run,
like ffmpeg) encoded by ffmpeg.
"""

from __future__ import annotations

import shutil
from typing import Protocol

from countbot.config.settings import SpeechSettings
from countbot.media.child import JobFailed, run_program


class SpeechFailed(Exception):
    """The answer could not be spoken; the text answer stands alone."""


class Speaker(Protocol):
    """Turns text into an OGG/Opus voice note."""

    async def speak(self, text: str) -> bytes: ...


class EndpointSpeaker:
    """POSTs to `<api_base>/audio/speech` (OpenAI's shape) asking for Opus."""

    def __init__(self, settings: SpeechSettings) -> None:
        assert settings.api_base is not None
        self._url = settings.api_base.rstrip("/") + "/audio/speech"
        key = settings.api_key.get_secret_value() if settings.api_key else None
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._body = {"model": settings.model, "voice": settings.voice, "response_format": "opus"}
        self._timeout = settings.timeout

    async def speak(self, text: str) -> bytes:
        import httpx  # imported at first use: the daemon loads this module at start-up

        try:
            async with httpx.AsyncClient(timeout=self._timeout) as client:
                response = await client.post(
                    self._url, headers=self._headers, json={**self._body, "input": text}
                )
        except httpx.HTTPError as exc:
            raise SpeechFailed(f"the speech service did not answer: {exc}") from None
        if response.status_code != 200 or not response.content:
            raise SpeechFailed(f"the speech service answered {response.status_code}")
        return response.content


class EspeakSpeaker:
    """espeak-ng's synthetic voice: robotic, offline, many languages."""

    def __init__(self, settings: SpeechSettings) -> None:
        self._voice = settings.espeak_voice
        self._timeout = settings.timeout

    async def speak(self, text: str) -> bytes:
        speak = ["espeak-ng", "-v", self._voice, "--stdout", text]
        encode = ["ffmpeg", "-loglevel", "error", "-i", "pipe:0", "-c:a", "libopus", "-b:a", "32k"]
        encode += ["-f", "ogg", "pipe:1"]
        try:
            wav = await run_program(speak, b"", time_limit=self._timeout)
            return await run_program(encode, wav, time_limit=self._timeout)
        except JobFailed as exc:
            raise SpeechFailed(str(exc)) from None


def speaker_for(settings: SpeechSettings) -> Speaker | None:
    """The configured speaker: the endpoint, else espeak-ng when installed; None when off."""
    if not settings.enabled:
        return None
    if settings.api_base:
        return EndpointSpeaker(settings)
    if shutil.which("espeak-ng") and shutil.which("ffmpeg"):
        return EspeakSpeaker(settings)
    return None
