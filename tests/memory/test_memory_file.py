"""MEMORY.md: reads, atomic writes, exact edits, search, and no lost updates under concurrency."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from countbot.memory.memory_file import MemoryEditError, MemoryFile

WORKER = Path(__file__).with_name("append_worker.py")


@pytest.fixture
def memory(tmp_path: Path) -> MemoryFile:
    return MemoryFile(tmp_path / "MEMORY.md")


async def test_missing_file_reads_as_empty_memory(memory: MemoryFile) -> None:
    assert await memory.read() == ""
    assert await memory.search("anything") == []


async def test_write_replaces_content_and_leaves_no_temp_files(memory: MemoryFile) -> None:
    await memory.write("# Memory\n\nfirst\n")
    await memory.write("# Memory\n\nsecond\n")
    assert await memory.read() == "# Memory\n\nsecond\n"
    leftovers = [p.name for p in memory.path.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


async def test_append_adds_sections_separated_by_a_blank_line(memory: MemoryFile) -> None:
    await memory.append("## One\nalpha")
    await memory.append("\n## Two\nbeta\n\n")
    assert await memory.read() == "## One\nalpha\n\n## Two\nbeta\n"


async def test_append_once_lands_exactly_once(memory: MemoryFile) -> None:
    marker = "<!-- countbot:summary session=s1 through=40 -->"
    section = f"## Summary\n{marker}\n\n- user likes tea"
    results = await asyncio.gather(*(memory.append_once(marker, section) for _ in range(5)))
    assert sorted(results) == [False, False, False, False, True]
    assert (await memory.read()).count(marker) == 1


async def test_replace_edits_the_single_exact_match(memory: MemoryFile) -> None:
    await memory.write("- lives in Berlin\n- likes tea\n")
    await memory.replace("lives in Berlin", "lives in Hamburg")
    assert await memory.read() == "- lives in Hamburg\n- likes tea\n"


@pytest.mark.parametrize(
    ("old", "message"),
    [("lives in Paris", "not found"), ("likes", "occurs 2 times"), ("", "empty")],
)
async def test_replace_refuses_missing_or_ambiguous_text_and_changes_nothing(
    memory: MemoryFile, old: str, message: str
) -> None:
    await memory.write("- likes tea\n- likes rain\n")
    with pytest.raises(MemoryEditError, match=message):
        await memory.replace(old, "x")
    assert await memory.read() == "- likes tea\n- likes rain\n"


async def test_search_through_the_file(memory: MemoryFile) -> None:
    await memory.write("# Memory\n\n## Food\n- Likes green TEA\n- dislikes coffee\n")
    hits = await memory.search("tea green")
    assert [(h.line, h.text, h.heading) for h in hits] == [(4, "- Likes green TEA", "## Food")]


async def test_concurrent_appends_in_one_process_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    # Two instances on the same file, as two components of the daemon might hold.
    first, second = MemoryFile(path), MemoryFile(path)
    await asyncio.gather(
        *(first.append(f"a-{i}") for i in range(60)),
        *(second.append(f"b-{i}") for i in range(60)),
    )
    lines = {line for line in (await first.read()).splitlines() if line}
    assert lines == {f"a-{i}" for i in range(60)} | {f"b-{i}" for i in range(60)}


async def test_two_processes_appending_at_once_lose_nothing(tmp_path: Path) -> None:
    path, go = tmp_path / "MEMORY.md", tmp_path / "go"
    workers = [
        await asyncio.create_subprocess_exec(
            sys.executable, str(WORKER), str(path), prefix, "80", str(go)
        )
        for prefix in ("p1", "p2")
    ]
    go.touch()
    codes = await asyncio.gather(*(w.wait() for w in workers))
    assert codes == [0, 0]
    lines = {line for line in (await MemoryFile(path).read()).splitlines() if line}
    assert lines == {f"{p}-{i}" for p in ("p1", "p2") for i in range(80)}
    # The lock leaves nothing beside the file for the model or the user to find.
    assert sorted(os.listdir(tmp_path)) == ["MEMORY.md", "go"]


async def test_a_lock_file_an_earlier_version_left_is_removed(tmp_path: Path) -> None:
    (tmp_path / ".MEMORY.md.lock").touch()
    await MemoryFile(tmp_path / "MEMORY.md").append("- likes green tea")
    assert os.listdir(tmp_path) == ["MEMORY.md"]


async def test_a_failing_update_leaves_the_file_untouched(memory: MemoryFile) -> None:
    await memory.write("keep me\n")

    def broken(_old: str) -> str:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        await memory.update(broken)
    assert await memory.read() == "keep me\n"
