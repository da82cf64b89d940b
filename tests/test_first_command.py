"""The README's first command, run as a new user runs it: on a clean clone, in a fresh virtual
environment, installing from the package index. Through the daemon of that install, memory
search finds a note by its meaning, a PDF sent from the web UI comes back as text and an English
voice note is transcribed (what the model is asked shows both: it is the scripted model, set
on the Settings page): what a person who followed the README gets, with no account.

This is the suite's one install from the index (minutes, most of it pip); CI reaches the index,
so it runs there. `COUNTBOT_SKIP_INSTALL_TEST=1` leaves it out on a machine without one, and
says so: it is never skipped silently.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect

from countbot.config.instance import SHIPPED_ROOT
from countbot.memory_index.embeddings import offline_embedder
from tests.support import media_files
from tests.support.checkout import clean_checkout
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import WsClient

SKIP_VARIABLE = "COUNTBOT_SKIP_INSTALL_TEST"
# pip resolving and installing every extra on a loaded 2-core machine, from its cache or not.
INSTALL_WAIT = 1500
START_WAIT = 120.0
WAIT = 120.0  # the first document and voice jobs import markitdown and the recognizer
KEY = "sk-test-0123456789abcdef"
NOTE = "My daughter has piano lessons every Wednesday afternoon."
# Not one word in common with the note: only its meaning can find it.
QUESTION = "which day is the kid's music class"

pytestmark = [pytest.mark.install, pytest.mark.timeout(INSTALL_WAIT + 600)]


def first_command() -> list[str]:
    """The README's first command (the first `sh` block), split at its `&&`s."""
    readme = (SHIPPED_ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", readme, re.DOTALL)
    assert block is not None, "the README has no sh block"
    steps = [step.strip() for step in block.group(1).strip().split("&&")]
    assert steps[0].startswith("pip install") and steps[-1] == "countbot run", steps
    return steps


@pytest.fixture
def own_folder() -> Iterator[Path]:
    """A folder of this test's own: pytest's basetemp is pruned by later pytest runs of the same
    user, and on a shared machine one may start during this test's minutes."""
    with tempfile.TemporaryDirectory(prefix="countbot-first-command-") as folder:
        yield Path(folder)


@pytest.fixture
def installed(own_folder: Path) -> tuple[Path, dict[str, str], list[str]]:
    """A clean clone with a fresh venv where every step but `countbot run` has been run."""
    if os.environ.get(SKIP_VARIABLE):
        pytest.skip(f"{SKIP_VARIABLE} is set: the README's install was not tried")
    tmp_path = own_folder
    checkout = clean_checkout(tmp_path / "countbot")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COUNTBOT_")}
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    env.update(
        # pip's own cache (filled by tests/run.sh's install) stays where it is: wheels already
        # downloaded are not fetched again.
        PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
        # Python compiles what it imports anyway; compiling every installed module up front is
        # a large share of the install's CPU on two cores.
        PIP_NO_COMPILE="1",
        HOME=str(tmp_path / "home"),
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        NO_PROXY="*",
        PYTHONUNBUFFERED="1",
        PYTHONDONTWRITEBYTECODE="1",
        # The daemon's first start says its port on its first line; 8686 may be taken here.
        COUNTBOT_PORT="0",
    )
    *steps, run = first_command()
    for step in steps:
        done = subprocess.run(
            ["bash", "-c", step],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            timeout=INSTALL_WAIT,
        )
        assert done.returncode == 0, f"{step!r} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return checkout, env, shlex.split(run)


async def test_the_readme_install_remembers_by_meaning_reads_pdfs_and_hears(
    installed: tuple[Path, dict[str, str], list[str]], model_server: ScriptedModelServer
) -> None:
    checkout, env, run = installed
    log = checkout.parent / "daemon.log"  # what the daemon said, shown when a check fails
    with log.open("wb") as said:
        process = await asyncio.create_subprocess_exec(
            *run, cwd=checkout, env=env, stdout=asyncio.subprocess.PIPE, stderr=said
        )
        try:
            assert process.stdout is not None
            line = (await asyncio.wait_for(process.stdout.readline(), START_WAIT)).decode()
            match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
            assert match, f"its first line: {line!r}"
            base = f"127.0.0.1:{match.group(1)}"
            async with httpx.AsyncClient(
                base_url=f"http://{base}", trust_env=False, timeout=WAIT
            ) as http:
                await remembered_by_meaning(http)
                await read_from_the_web_ui(http, f"ws://{base}/ws", model_server)
            process.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(process.wait(), START_WAIT) == 0
        except AssertionError as failure:
            raise AssertionError(
                f"{failure}\nthe daemon's log:\n{log.read_text()[-4000:]}"
            ) from None
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()


async def remembered_by_meaning(http: httpx.AsyncClient) -> None:
    response = await http.put("/api/memory", json={"content": f"# Memory\n\n{NOTE}\n"})
    assert response.status_code == 200, response.text
    for _ in range(int(WAIT / 0.2)):
        status = (await http.get("/api/memory/index")).json()
        if status["vectors_ready"] and status["vectors"] >= status["entries"] > 0:
            break
        await asyncio.sleep(0.2)
    assert status["model"] == offline_embedder().model_id and status["vectors_ready"], status
    hits = (await http.get("/api/memory/search", params={"q": QUESTION})).json()["hits"]
    assert any("piano lessons" in hit["text"] for hit in hits), hits


async def read_from_the_web_ui(
    http: httpx.AsyncClient, ws_url: str, model_server: ScriptedModelServer
) -> None:
    """A PDF and a recording attached to a web message reach the model as text."""
    model_server.responder = lambda body: Reply.text("Noted.")
    model = {"name": "openai/test-model", "api_base": model_server.base_url, "api_key": KEY}
    response = await http.put("/api/settings", json={"model": model})
    assert response.status_code == 200, response.text
    report = media_files.pdf(["Quarterly report\nRevenue grew by eleven percent in Lisbon."])
    voice = media_files.converted(media_files.spoken_wav(), "-c:a", "libopus", suffix=".webm")
    attachments = []
    for name, kind, data in (("report.pdf", "file", report), ("voice.webm", "voice", voice)):
        response = await http.post("/api/media", params={"name": name, "kind": kind}, content=data)
        assert response.status_code == 200, response.text
        attachments.append({"file": response.json()["file"], "name": name, "kind": kind})
    client = WsClient(await connect(ws_url, proxy=None, max_size=None))
    try:
        message = {"type": "message", "session_id": "first", "content": "What do these say?"}
        await client.send({**message, "attachments": attachments})
        done = await asyncio.wait_for(client.until("done"), WAIT)
    finally:
        await client.close()
    assert done["content"] == "Noted."
    asked = json.dumps(model_server.requests[-1]["messages"][-1], ensure_ascii=False)
    assert "Revenue grew by eleven percent in Lisbon." in asked, asked
    assert media_files.SENTENCE in asked, asked
