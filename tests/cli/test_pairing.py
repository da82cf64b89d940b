"""`countbot pairing` as the owner runs it: a real subprocess on a real data folder."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from countbot.store.database import Database
from countbot.store.pairing import PairingStore, SenderInfo

COUNTBOT = [sys.executable, "-m", "countbot"]


def countbot(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    config = folder / "config.yaml"
    config.write_text("workspace: ws\ndata_dir: state\n")
    return subprocess.run(
        [*COUNTBOT, *args, "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )


async def offer_code(folder: Path, sender: SenderInfo, code: str) -> None:
    db = await Database.open(folder / "state" / "countbot.db")
    try:
        await PairingStore(db).offer("telegram", sender, lambda: code, time.time())
    finally:
        await db.close()


async def test_list_shows_waiting_codes_then_approve_pairs_the_sender(tmp_path: Path) -> None:
    await offer_code(tmp_path, SenderInfo("555", "mallory", "Mallory"), "ABC234")

    listed = countbot(tmp_path, "pairing", "list")
    assert listed.returncode == 0
    assert "telegram ABC234  555 (@mallory) Mallory" in listed.stdout
    assert "Nobody has been paired yet." in listed.stdout

    approved = countbot(tmp_path, "pairing", "approve", "telegram", "abc234")
    assert approved.returncode == 0, approved.stderr
    assert "Paired telegram user 555 (@mallory) Mallory" in approved.stdout

    listed = countbot(tmp_path, "pairing", "list")
    assert "No pairing codes are waiting." in listed.stdout
    assert "telegram  555 (@mallory) Mallory" in listed.stdout


def test_a_wrong_code_or_channel_is_an_error(tmp_path: Path) -> None:
    wrong_code = countbot(tmp_path, "pairing", "approve", "telegram", "NOPE22")
    assert wrong_code.returncode == 1 and "no pending telegram pairing code" in wrong_code.stderr
    wrong_channel = countbot(tmp_path, "pairing", "approve", "icq", "ABC234")
    assert wrong_channel.returncode == 2 and "unknown channel 'icq'" in wrong_channel.stderr
