"""Speech to text: the offline recognizer (pocketsphinx, English, its model inside the wheel)
or any OpenAI-compatible `/audio/transcriptions` endpoint (OpenAI, Groq, a local whisper server).
"""

from __future__ import annotations

import io
import wave
from typing import Protocol

from countbot.media.audio import RATE, Pcm
from countbot.media.child import JobFailed, run_job


class TranscriptionFailed(Exception):
    """The recognizer could not transcribe; the message says why."""


class Recognizer(Protocol):
    """Turns 16 kHz mono PCM into the words spoken. `label` names it for the user."""

    label: str

    async def transcribe(self, pcm: Pcm) -> str: ...


class OfflineRecognizer:
    """pocketsphinx in a child process (`worker.recognize`): no network, no key, English.

    It takes about half a second per second of audio on an idle core and several times that on
    a busy machine, so its time limit grows with the recording: `timeout` plus
    `SECONDS_PER_AUDIO_SECOND` for each second.
    """

    label = "the offline recognizer"
    SECONDS_PER_AUDIO_SECOND = 4.0

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout

    async def transcribe(self, pcm: Pcm) -> str:
        limit = self._timeout + self.SECONDS_PER_AUDIO_SECOND * pcm.seconds
        try:
            out = await run_job("recognize", pcm.data, time_limit=limit)
        except JobFailed as exc:
            raise TranscriptionFailed(str(exc)) from None
        return out.decode("utf-8", "replace").strip()


class EndpointRecognizer:
    """POSTs a WAV to `<api_base>/audio/transcriptions` (multipart, OpenAI's shape)."""

    def __init__(
        self,
        api_base: str,
        api_key: str | None,
        model: str,
        *,
        language: str | None = None,
        timeout: float,
    ) -> None:
        self._url = api_base.rstrip("/") + "/audio/transcriptions"
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._model = model
        self._language = language
        self._timeout = timeout
        self.label = model

    async def transcribe(self, pcm: Pcm) -> str:
        fields = {"model": self._model, "response_format": "json"}
        if self._language:
            fields["language"] = self._language
        files = {"file": ("voice.wav", wav_bytes(pcm), "audio/wav")}
        import httpx  # imported at first use: the daemon loads this module at start-up

        try:
            async with httpx.AsyncClient(timeout=self._timeout) as client:
                response = await client.post(
                    self._url, headers=self._headers, data=fields, files=files
                )
        except httpx.HTTPError as exc:
            raise TranscriptionFailed(f"the transcription service did not answer: {exc}") from None
        if response.status_code != 200:
            detail = response.text[:200].strip()
            raise TranscriptionFailed(
                f"the transcription service answered {response.status_code}: {detail}"
            )
        try:
            text = response.json().get("text")
        except (ValueError, AttributeError):
            text = None
        if not isinstance(text, str):
            raise TranscriptionFailed("the transcription service's answer had no text")
        return text.strip()


def wav_bytes(pcm: Pcm) -> bytes:
    """The PCM in a WAV container (a 44-byte header; the samples are copied once)."""
    out = io.BytesIO()
    with wave.open(out, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(RATE)
        file.writeframes(pcm.data)
    return out.getvalue()
