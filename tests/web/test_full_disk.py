"""A full disk under a running daemon (a file-size limit set on the real process): the turn
fails with words, nothing half-written is left, and the next turn works once space returns."""

from __future__ import annotations

import contextlib
import json
import resource
import signal
import sqlite3
from pathlib import Path

from countbot.config.loader import load_settings
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import write_config
from tests.web.test_daemon import running_daemon, stored

UNLIMITED = (resource.RLIM_INFINITY, resource.RLIM_INFINITY)


@contextlib.contextmanager
def _file_size_errors() -> object:
    """Processes started meanwhile get EFBIG at the file-size limit instead of being killed by
    SIGXFSZ (an ignored signal stays ignored across exec), as a full disk gives ENOSPC."""
    before = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGXFSZ, before)


async def test_a_full_disk_fails_the_turn_with_words_and_the_daemon_recovers(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    data = load_settings(config).data_dir
    with _file_size_errors():
        daemon_started = running_daemon(config)
        daemon = await daemon_started.__aenter__()
    try:
        tab = await daemon.ws()
        await tab.send({"type": "message", "session_id": "web:disk", "content": "first"})
        await tab.until("done")
        # The disk fills up: no file of the daemon's may grow past a byte.
        resource.prlimit(daemon.process.pid, resource.RLIMIT_FSIZE, (1, resource.RLIM_INFINITY))
        model_server.script(
            Reply.tool_calls(("list_dir", '{"path": "."}')), Reply.text("lost answer")
        )
        await tab.send({"type": "message", "session_id": "web:disk", "content": "second"})
        error = await tab.until("error")
        assert error["code"] == "not_saved"
        assert "could not be saved" in error["error"] and "disk may be full" in error["error"]

        resource.prlimit(daemon.process.pid, resource.RLIMIT_FSIZE, UNLIMITED)  # space returns
        model_server.reset()  # the answer the failed turn never asked for is dropped
        model_server.script(Reply.text("recovered"))
        await tab.send({"type": "message", "session_id": "web:disk", "content": "third"})
        assert (await tab.until("done", 2))["content"] == "recovered"
        records = await stored(config, "web:disk")
        texts = [record.get("content") or record.get("text") for record in records]
        # Nothing of the turn the full disk cut off: neither its question nor its tool call.
        assert texts == ["first", "ok", "third", "recovered"]
        assert await daemon.stop() == 0
    finally:
        await daemon_started.__aexit__(None, None, None)
    with contextlib.closing(sqlite3.connect(data / "countbot.db")) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    audit = data / "audit.jsonl"
    for line in audit.read_text().splitlines() if audit.exists() else []:
        json.loads(line)  # only whole lines: the write the full disk cut was taken back
