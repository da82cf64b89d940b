"""Token counts from the token worker, a child process: tiktoken's counts, and no turn broken
by a worker that dies or hangs."""

from __future__ import annotations

import logging
import os
import signal
from pathlib import Path

import pytest

from countbot.llm.model_info import litellm_data
from countbot.llm.token_counter import TOKENIZER_FOLDER, encoding_name
from countbot.llm.token_process import TokenProcess

TEXTS = [
    "hello world",
    "",
    "a\ud800b",  # a lone surrogate: counted as tiktoken's `encode` counts it
    "<|endoftext|><|fim_prefix|>",  # special tokens are text here
    "我女儿每周三下午上钢琴课。" * 50,
    "İ" * 300,
    "  \n\n\tx = {'a': 1}\n" * 200,
]


def maps_tiktoken(pid: int) -> bool:
    return "_tiktoken" in Path(f"/proc/{pid}/maps").read_text()


async def test_counts_are_tiktokens_and_made_in_another_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tiktoken

    # tiktoken's own encodings, read from the files litellm bundles (as the worker reads them).
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(litellm_data(*TOKENIZER_FOLDER)))
    counter = TokenProcess()
    try:
        for model in ("gpt-4o", "deepseek/deepseek-chat"):
            counts = await counter.count(TEXTS, model)
            encoding = tiktoken.get_encoding(encoding_name(model))
            assert counts == [len(encoding.encode(t, disallowed_special=())) for t in TEXTS]
        pid = counter.pid
        assert pid is not None and pid != os.getpid() and maps_tiktoken(pid)
    finally:
        await counter.close()
    assert counter.pid is None


async def test_a_worker_that_dies_or_hangs_gives_no_counts_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    counter = TokenProcess(wait=1.0, timeout=5.0, rest=0.0)  # 30 s to start
    try:
        assert await counter.count(["hello world"], "gpt-4o") == [2]
        pid = counter.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        with caplog.at_level(logging.WARNING, "countbot.llm.token_process"):
            assert await counter.count(["hello world"], "gpt-4o") is None
        assert "token counts unavailable" in caplog.text
        # The next call starts a new worker.
        assert await counter.count(["hello world"], "gpt-4o") == [2]
        hung = counter.pid
        assert hung is not None and hung != pid
        os.kill(hung, signal.SIGSTOP)
        assert await counter.count(["hello world"], "gpt-4o") is None  # after its 1 s wait
    finally:
        await counter.close()
