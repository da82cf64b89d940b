"""Real media made here for the tests and benchmarks: speech from espeak-ng converted by ffmpeg
(or the SILK encoder), and PDF, DOCX and XLSX files with text in them.

The speech uses a voice and speed that the offline recognizer (pocketsphinx's US English model)
transcribes word for word; a recording of a person would do no better in a test.
"""

from __future__ import annotations

import io
import subprocess
import tempfile
from pathlib import Path

SENTENCE = "what is the weather today"


def spoken_wav(text: str = SENTENCE) -> bytes:
    """`text` spoken by espeak-ng, as a WAV file."""
    return subprocess.run(
        ["espeak-ng", "-v", "en-us+m3", "-s", "160", "--stdout", text],
        check=True,
        capture_output=True,
    ).stdout


def converted(wav: bytes, *options: str, suffix: str) -> bytes:
    """`wav` re-encoded by ffmpeg with `options` (e.g. `-c:a libopus`) into a `suffix` file."""
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder, "in.wav"), Path(folder, f"out{suffix}")
        source.write_bytes(wav)
        subprocess.run(
            ["ffmpeg", "-loglevel", "error", "-i", str(source), *options, str(target)], check=True
        )
        return target.read_bytes()


def ogg_opus(text: str = SENTENCE) -> bytes:
    """A voice note as Telegram, WhatsApp and Feishu send them."""
    return converted(spoken_wav(text), "-c:a", "libopus", "-b:a", "24k", suffix=".ogg")


def silk(text: str = SENTENCE) -> bytes:
    """A voice note as QQ and WeChat send them (SILK v3 with WeChat's leading byte)."""
    import pysilk

    pcm = converted(spoken_wav(text), "-ar", "24000", "-ac", "1", "-f", "s16le", suffix=".pcm")
    out = io.BytesIO()
    pysilk.encode(io.BytesIO(pcm), out, 24000, 24000, tencent=True)
    return out.getvalue()


def silence_wav(seconds: float) -> bytes:
    return subprocess.run(
        ["sox", "-n", "-r", "16000", "-c", "1", "-b", "16", "-t", "wav", "-", "trim", "0",
         str(seconds)],
        check=True,
        capture_output=True,
    ).stdout  # fmt: skip


def pdf(pages: list[str]) -> bytes:
    """A PDF with a page of Helvetica text per item (lines split at newlines), written by hand
    (no PDF library)."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for index, text in enumerate(pages):
        lines = " T* ".join(f"({_escaped(line)}) Tj" for line in text.split("\n"))
        stream = f"BT /F1 12 Tf 14 TL 72 740 Td {lines} ET"
        objects.append(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * index} 0 R >>"
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    return _pdf_file(objects)


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def scanned_pdf() -> bytes:
    """A page with a picture and no text layer, as a scanner makes it."""
    image = "<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray "
    image += "/BitsPerComponent 8 /Length 1 >>\nstream\n\x80\nendstream"
    stream = "q 612 0 0 792 0 0 cm /Im1 Do Q"
    return _pdf_file(
        [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            "/Resources << /XObject << /Im1 4 0 R >> >> /Contents 5 0 R >>",
            image,
            f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
        ]
    )


def _pdf_file(objects: list[str]) -> bytes:
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    out += trailer.encode()
    return bytes(out)


def docx(paragraphs: list[str]) -> bytes:
    import docx as python_docx

    document = python_docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def xlsx(rows: list[list[object]]) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    for row in rows:
        sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()
