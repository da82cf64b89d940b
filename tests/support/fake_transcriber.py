"""A fake OpenAI-compatible audio service on 127.0.0.1: `POST /v1/audio/transcriptions`
(multipart: `file`, `model`, ...) answered with `{"text": ...}`, and `POST /v1/audio/speech`
answered with `voice` (OGG/Opus bytes). It keeps what it received, so a test can check the audio
that arrived is a real WAV of the expected length.
"""

from __future__ import annotations

import io
import wave
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.channels.loopback import LoopbackServer


@dataclass
class Received:
    fields: dict[str, str]
    audio: bytes
    authorization: str | None

    def seconds(self) -> float:
        with wave.open(io.BytesIO(self.audio)) as file:
            return file.getnframes() / file.getframerate()


@dataclass
class FakeTranscriber:
    """Answers every request with `text` (or `status` with an error body)."""

    text: str = "book a table for two at eight"
    status: int = 200
    received: list[Received] = field(default_factory=list)
    voice: bytes = b"OggS fake voice"
    spoken: list[dict[str, object]] = field(default_factory=list)
    _http: LoopbackServer = field(default_factory=LoopbackServer)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self._http.port}/v1"

    async def start(self) -> None:
        routes = [
            Route("/v1/audio/transcriptions", self._transcribe, methods=["POST"]),
            Route("/v1/audio/speech", self._speak, methods=["POST"]),
        ]
        await self._http.serve(routes)

    async def stop(self) -> None:
        await self._http.shutdown()

    async def _speak(self, request: Request) -> Response:
        """OpenAI's speech endpoint: the JSON body's `input` as OGG/Opus (espeak-ng here)."""
        self.spoken.append(await request.json())
        return Response(self.voice, media_type="audio/ogg")

    async def _transcribe(self, request: Request) -> JSONResponse:
        head = f"Content-Type: {request.headers['content-type']}\r\n\r\n".encode()
        message = BytesParser(policy=HTTP).parsebytes(head + await request.body())
        fields, audio = {}, b""
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if name == "file":
                audio = part.get_payload(decode=True)
            else:
                fields[str(name)] = part.get_content().strip()
        self.received.append(Received(fields, audio, request.headers.get("authorization")))
        if self.status != 200:
            return JSONResponse({"error": {"message": "the service is down"}}, self.status)
        return JSONResponse({"text": self.text})
