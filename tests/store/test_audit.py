from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from countbot.common.masking import SecretMasker
from countbot.store.audit import AuditLog

KEY = "sk-" + "Zx9" * 8


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def file_names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


async def test_every_queued_line_is_written_masked_by_close(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "audit.jsonl"
    audit = AuditLog(path, SecretMasker())
    for n in range(500):
        audit.write(
            {
                "seq": n,
                "name": "exec",
                "arguments": {"command": f"export OPENAI_API_KEY={KEY}"},
                "result": f"token is {KEY}",
            }
        )
    await audit.close()

    written = lines(path)
    assert [line["seq"] for line in written] == list(range(500))
    assert KEY not in path.read_text(encoding="utf-8")
    assert written[0]["arguments"]["command"].startswith("export OPENAI_API_KEY=")
    assert all(isinstance(line["ts"], float) for line in written)


async def test_close_is_idempotent_and_refuses_later_writes(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit.jsonl", SecretMasker())
    audit.write({"seq": 0})
    await audit.close()
    await audit.close()
    with pytest.raises(RuntimeError, match="closed"):
        audit.write({"seq": 1})
    assert [line["seq"] for line in lines(tmp_path / "audit.jsonl")] == [0]


async def test_flush_makes_lines_visible_to_other_readers(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit.jsonl", SecretMasker())
    try:
        audit.write({"seq": 0, "ts": 5.0})
        await audit.flush()
        assert lines(tmp_path / "audit.jsonl") == [{"seq": 0, "ts": 5.0}]
    finally:
        await audit.close()


async def test_rotation_keeps_a_bounded_number_of_backups(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path, SecretMasker(), max_bytes=1_000, backups=2)
    for n in range(100):
        audit.write({"seq": n, "padding": "x" * 60})
        await audit.flush()
    await audit.close()

    files = file_names(tmp_path)
    assert files == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"]
    backups = [lines(tmp_path / f"audit.jsonl.{n}") for n in (2, 1)]
    kept = [line["seq"] for part in [*backups, lines(path)] for line in part]
    # The newest lines survive in order; only the oldest were dropped.
    assert kept == list(range(100 - len(kept), 100))
    assert len(kept) < 100
    assert all((tmp_path / name).stat().st_size < 1_000 + 100 for name in files)


async def test_recent_reads_newest_first_across_rotated_files_with_filters(
    tmp_path: Path,
) -> None:
    audit = AuditLog(tmp_path / "audit.jsonl", SecretMasker(), max_bytes=2_000, backups=5)
    try:
        for n in range(60):
            audit.write({"seq": n, "name": "exec" if n % 2 else "read_file", "status": "ok"})
            await audit.flush()
        audit.write({"seq": 60, "name": "exec", "status": "error"})

        assert (tmp_path / "audit.jsonl.1").exists()
        assert [r["seq"] for r in await audit.recent(limit=5)] == [60, 59, 58, 57, 56]
        execs = await audit.recent(limit=40, name="exec")
        assert [r["seq"] for r in execs] == [60, *range(59, 0, -2)][:31]
        assert [r["seq"] for r in await audit.recent(name="exec", status="error")] == [60]
        assert await audit.recent(name="nothing") == []
    finally:
        await audit.close()


async def test_a_line_cut_short_by_a_crash_is_skipped_and_does_not_swallow_the_next(
    tmp_path: Path,
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text('{"seq": 0}\n{"seq": 1}\n{"seq": 2, "na', encoding="utf-8")
    audit = AuditLog(path, SecretMasker())
    try:
        assert [r["seq"] for r in await audit.recent()] == [1, 0]
        audit.write({"seq": 3})
        assert [r["seq"] for r in await audit.recent()] == [3, 1, 0]
    finally:
        await audit.close()
