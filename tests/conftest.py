"""Shared fixtures: the scripted model server and settings that point a real runtime at it."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from countbot.config.settings import Settings
from countbot.runtime.assembly import Runtime, open_runtime
from tests.channels.fake_telegram import FakeTelegram
from tests.support.fake_transcriber import FakeTranscriber
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings

if TYPE_CHECKING:  # aiosmtpd, which it imports, is in the test extra only
    from tests.channels.fake_mail import FakeMail

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
# No test (nor a daemon or command a test starts) may use the user's own instance folder.
os.environ["COUNTBOT_HOME"] = tempfile.mkdtemp(prefix="countbot-test-home-")
atexit.register(shutil.rmtree, os.environ["COUNTBOT_HOME"], True)
os.environ.pop("COUNTBOT_CONFIG", None)


@pytest.fixture(scope="session")
def _model_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture
def model_server(_model_server: ScriptedModelServer) -> ScriptedModelServer:
    """The scripted OpenAI-compatible server, with an empty script for this test."""
    _model_server.reset()
    _model_server.responder = None
    _model_server.default = Reply.text("ok")  # a test that changed it must not answer the next
    return _model_server


@pytest.fixture
def settings(tmp_path: Path, model_server: ScriptedModelServer) -> Settings:
    return make_settings(tmp_path, model_server)


@pytest.fixture
async def runtime(settings: Settings) -> AsyncIterator[Runtime]:
    rt = await open_runtime(settings)
    try:
        yield rt
    finally:
        await rt.close()


@pytest.fixture
async def fake_telegram() -> AsyncIterator[FakeTelegram]:
    """A fake Telegram server with no bot yet (for tests that start and stop bots themselves)."""
    fake = FakeTelegram()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
async def fake_mail() -> AsyncIterator[FakeMail]:
    """A fake mail provider (IMAP in, SMTP out) on loopback; needs the test extra's aiosmtpd."""
    pytest.importorskip("aiosmtpd", reason="tests/run.sh installs the test extra")
    from tests.channels.fake_mail import FakeMail

    fake = FakeMail()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
async def transcriber() -> AsyncIterator[FakeTranscriber]:
    """A fake OpenAI-compatible transcription endpoint on loopback."""
    fake = FakeTranscriber()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()
