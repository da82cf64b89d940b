"""The child side of `child.run_job`: `python -m countbot.media.worker JOB [ARG]`.

Jobs read their input from stdin and write their result to stdout; a failure is one line on
stderr and exit status 1. The libraries are imported here only, so the daemon never loads them.
  recognize          16 kHz mono s16le PCM -> the words heard (pocketsphinx, English)
  silk               a SILK v3 voice note (QQ, WeChat) -> 24 kHz mono s16le PCM
  document EXT       a document of type EXT (pdf, docx, ...) -> its text as Markdown
"""

from __future__ import annotations

import io
import resource
import sys
from typing import Any

# No job needs more; a hostile file meets MemoryError here, never the daemon.
MEMORY_LIMIT = 3 * 1024**3
SILK_RATE = 24_000
SHORTEST_CHUNK, LONGEST_CHUNK = 8, 20  # seconds of speech decoded as one utterance
VOICE_EXTRA = "offline transcription needs the voice extra: pip install 'countbot[voice]'"
DOCUMENT_KINDS = ("pdf", "docx", "xlsx", "pptx", "html")
DOCUMENTS_EXTRA = "reading documents needs the documents extra: pip install 'countbot[documents]'"


def recognize(pcm: bytes) -> str:
    """The words in `pcm`. Each stretch of up to `LONGEST_CHUNK` seconds, cut at a pause once it
    is `SHORTEST_CHUNK` long, is decoded as one utterance in batch mode: the recognizer normalizes
    over the whole stretch, which beat cutting at every pause by a wide margin on our test
    speech, while no utterance of a long note grows past `LONGEST_CHUNK` seconds."""
    try:
        from pocketsphinx import Decoder, Vad
    except ImportError:
        raise SystemExit(_fail(VOICE_EXTRA)) from None
    decoder = Decoder(samprate=16_000, logfn="/dev/null")
    words = []
    for chunk in _chunks(pcm, Vad()):
        decoder.start_utt()
        decoder.process_raw(chunk, full_utt=True)
        decoder.end_utt()
        hypothesis = decoder.hyp()
        if hypothesis is not None and hypothesis.hypstr:
            words.append(hypothesis.hypstr)
    return " ".join(words)


def _chunks(pcm: bytes, vad: Any) -> list[bytes]:
    frame = int(vad.frame_bytes)
    shortest, longest = SHORTEST_CHUNK * 32_000, LONGEST_CHUNK * 32_000
    chunks, start = [], 0
    for position in range(0, len(pcm) - frame + 1, frame):
        length = position - start
        if length >= longest or (
            length >= shortest and not vad.is_speech(pcm[position : position + frame])
        ):
            chunks.append(pcm[start:position])
            start = position
    chunks.append(pcm[start:])
    return [chunk for chunk in chunks if chunk]


def decode_silk(data: bytes) -> bytes:
    try:
        import pysilk
    except ImportError:
        raise SystemExit(_fail(VOICE_EXTRA)) from None
    # WeChat prefixes the "#!SILK_V3" header with one byte; the decoder wants it without.
    start = data.find(b"#!SILK_V3")
    out = io.BytesIO()
    try:
        pysilk.decode(io.BytesIO(data[max(start, 0) :]), out, SILK_RATE)
    except Exception as exc:  # the decoder raises its own types for a broken stream
        raise SystemExit(_fail(f"the SILK voice note could not be decoded: {exc}")) from None
    return out.getvalue()


def convert_document(data: bytes, extension: str) -> str:
    """The text of a document, by the one markitdown converter for its format (markitdown's
    own dispatch falls back to reading a broken file as plain text)."""
    try:
        from markitdown import StreamInfo, converters
    except ImportError:
        raise SystemExit(_fail(DOCUMENTS_EXTRA)) from None
    converter = {
        "pdf": converters.PdfConverter,
        "docx": converters.DocxConverter,
        "xlsx": converters.XlsxConverter,
        "pptx": converters.PptxConverter,
        "html": converters.HtmlConverter,
    }[extension]()
    try:
        result = converter.convert(io.BytesIO(data), StreamInfo(extension=f".{extension}"))
    except Exception as exc:  # every converter raises its own types for a broken file
        reason = str(exc).strip().splitlines()
        detail = reason[-1] if reason else type(exc).__name__
        message = f"the {extension.upper()} file could not be read: {detail}"
        raise SystemExit(_fail(message)) from None
    return result.markdown.replace("\f", "\n")  # pdfminer ends each page with a form feed


def _fail(message: str) -> int:
    print(message, file=sys.stderr)
    return 1


def main(argv: list[str]) -> int:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    data = sys.stdin.buffer.read()
    job = argv[0] if argv else ""
    try:
        if job == "recognize":
            sys.stdout.write(recognize(data))
        elif job == "silk":
            sys.stdout.buffer.write(decode_silk(data))
        elif job == "document" and len(argv) == 2 and argv[1] in DOCUMENT_KINDS:
            sys.stdout.write(convert_document(data, argv[1]))
        else:
            return _fail(f"unknown job: {' '.join(argv)!r}")
    except MemoryError:
        return _fail("it needs more memory than a media job may use")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
