"""read_file on documents made here: PDF, DOCX and XLSX come back as their text, long ones paged
by line like any text file; a scan says it has no text layer."""

from __future__ import annotations

from pathlib import Path

from countbot.tools.base import ToolContext
from countbot.tools.files import ReadFileTool
from countbot.tools.workspace_guard import WorkspaceGuard
from tests.support import media_files


async def read_file(workspace: Path, **args: object):
    tool = ReadFileTool(WorkspaceGuard(workspace, restrict=True, sensitive_paths=()))
    return await tool.execute(args, ToolContext("s1", workspace))


async def test_read_file_reads_a_pdf_a_docx_and_an_xlsx_as_text(tmp_path: Path) -> None:
    (tmp_path / "report.pdf").write_bytes(media_files.pdf(["Revenue grew by 12 percent"]))
    (tmp_path / "notes.docx").write_bytes(media_files.docx(["Call the plumber on Friday"]))
    (tmp_path / "stock.xlsx").write_bytes(media_files.xlsx([["item", "left"], ["pears", 3]]))

    pdf = await read_file(tmp_path, path="report.pdf")
    docx = await read_file(tmp_path, path="notes.docx")
    xlsx = await read_file(tmp_path, path="stock.xlsx")

    assert not pdf.is_error and "Revenue grew by 12 percent" in pdf.content
    assert not docx.is_error and "Call the plumber on Friday" in docx.content
    assert not xlsx.is_error and "| pears | 3 |" in xlsx.content
    assert (tmp_path / "report.pdf").read_bytes().startswith(b"%PDF"), "the original is kept"


async def test_a_documents_text_is_read_in_line_ranges(tmp_path: Path) -> None:
    paragraphs = [f"Paragraph number {n}" for n in range(1, 41)]
    (tmp_path / "long.docx").write_bytes(media_files.docx(paragraphs))

    part = await read_file(tmp_path, path="long.docx", offset=3, limit=2)

    lines = part.content.splitlines()
    assert lines[-1].startswith("[lines 3-4; continue with offset=5]")
    assert len(lines) == 3


async def test_a_scanned_pdf_says_there_is_no_text_layer(tmp_path: Path) -> None:
    (tmp_path / "scan.pdf").write_bytes(media_files.scanned_pdf())

    result = await read_file(tmp_path, path="scan.pdf")

    assert "has no text to read: it has no text layer" in result.content


async def test_a_document_outside_the_workspace_is_refused_before_conversion(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (tmp_path / "secret.pdf").write_bytes(media_files.pdf(["private"]))

    result = await read_file(workspace, path="../secret.pdf")

    assert result.is_error and "private" not in result.content
