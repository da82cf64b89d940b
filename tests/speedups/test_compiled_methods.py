"""Dataclass methods compiled once: a later run reads the code back and makes the same classes;
a cache that does not read back is made again; `chat -m` keeps its table in the data folder."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from countbot.speedups.compiled_methods import cache_file, reused_methods
from tests.cli.test_chat import run, write_config
from tests.support.scripted_model import Reply, ScriptedModelServer

METHODS = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")


def make_record() -> type:
    """A frozen slotted dataclass with a default and a factory: every method text kind."""

    @dataclasses.dataclass(frozen=True, slots=True)
    class Record:
        name: str
        size: int = 0
        tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)

    return Record


def codes(cls: type) -> dict[str, Any]:
    return {name: getattr(cls, name).__code__ for name in METHODS}


def test_a_later_run_reads_the_code_back_and_makes_the_same_class(tmp_path: Path) -> None:
    plain = make_record()
    with reused_methods(tmp_path):
        first = make_record()
    written = cache_file(tmp_path)
    stamp = written.stat().st_mtime_ns
    with reused_methods(tmp_path):
        again = make_record()
    assert written.stat().st_mtime_ns == stamp  # nothing new to write: all was read back
    assert "exec" not in vars(dataclasses)  # the builtin is dataclasses' own again

    assert codes(first) == codes(plain) == codes(again)
    record = again("a", tags=("x",))
    assert record == again("a", 0, ("x",)) and hash(record) == hash(again("a", tags=("x",)))
    assert repr(record) == repr(plain("a", tags=("x",)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.name = "b"  # type: ignore[misc]


def test_a_cache_that_does_not_read_back_is_made_again(tmp_path: Path) -> None:
    written = cache_file(tmp_path)
    written.write_bytes(b"not marshalled code")
    with reused_methods(tmp_path):
        record = make_record()
    assert codes(record) == codes(make_record())
    with reused_methods(tmp_path):
        # The new file reads back: this run compiles nothing, so it writes nothing.
        stamp = written.stat().st_mtime_ns
        make_record()
    assert written.stat().st_mtime_ns == stamp


def test_chat_message_keeps_its_compiled_methods_in_the_data_folder(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    write_config(tmp_path, model_server)
    model_server.script(Reply.text("one"), Reply.text("two"))
    assert run("chat", "-m", "first", cwd=tmp_path).stdout.strip() == "one"
    written = cache_file(tmp_path / "state" / "cache")
    stamp = written.stat().st_mtime_ns
    assert run("chat", "-m", "second", cwd=tmp_path).stdout.strip() == "two"
    assert written.stat().st_mtime_ns == stamp  # read back whole, nothing compiled anew
