"""Token counts from the tokenizer files litellm ships, read by tiktoken without the network."""

from __future__ import annotations

import subprocess
import sys

from countbot.llm.token_counter import count_messages, count_text, encoding_name
from countbot.llm.types import (
    AssistantMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

OFFLINE = """
import socket, sys
def refuse(*args, **kwargs):
    raise OSError("network disabled for this test")
socket.socket.connect = refuse
socket.create_connection = refuse
from countbot.llm.token_counter import count_text
print(count_text("hello world", "gpt-4o"), count_text("hello world", "deepseek/deepseek-chat"))
print("litellm loaded:", "litellm" in sys.modules)
"""


def test_known_counts_for_both_encodings() -> None:
    assert count_text("hello world", "openai/gpt-4o") == 2
    assert count_text("hello world", "gpt-3.5-turbo") == 2
    assert count_text("", "gpt-4o") == 0
    assert count_text("<|endoftext|>", "gpt-4o") > 1  # special tokens count as text


def test_encodings_follow_the_model_family() -> None:
    assert encoding_name("openai/gpt-4o-mini") == "o200k_base"
    assert encoding_name("openrouter/openai/o3-mini") == "o200k_base"
    assert encoding_name("gpt-4-turbo") == "cl100k_base"
    assert encoding_name("deepseek/deepseek-chat") == "cl100k_base"


def test_messages_count_their_text_tool_calls_and_framing() -> None:
    call = ToolCall("call_1", "read_file", '{"path": "a.txt"}', {"path": "a.txt"})
    messages = (
        SystemMessage("You are terse."),
        UserMessage((TextPart("read a.txt"),)),
        AssistantMessage(tool_calls=(call,)),
        ToolResultMessage("call_1", "read_file", "hello"),
    )

    total = count_messages(messages, "gpt-4o")

    texts = ["You are terse.", "read a.txt", 'read_file{"path": "a.txt"}', "hello"]
    content = sum(count_text(t, "gpt-4o") for t in texts)
    assert total > content + 4 * 3  # framing per message, roles, the tool ids
    assert count_messages(messages[:1], "gpt-4o") < total


def test_counting_works_offline_without_litellm() -> None:
    result = subprocess.run(
        [sys.executable, "-c", OFFLINE], capture_output=True, text=True, timeout=60
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["2 2", "litellm loaded: False"]


def test_counts_match_tiktokens_own_encoding() -> None:
    """The daemon keeps only tiktoken's Rust tables; its counts are those of `Encoding.encode`,
    lone surrogates and special tokens written as text included."""
    import tiktoken

    count_text("", "gpt-4o")  # the bundled files' folder is set by the first load
    count_text("x", "gpt-4")
    texts = ["a\ud800b", "<|endoftext|><|fim_prefix|>", "İ" * 300, "  \n\n\tx ", "x = {'a': 1}\n"]
    for model in ("gpt-4o", "gpt-4"):
        encoding = tiktoken.get_encoding(encoding_name(model))
        for text in texts:
            assert count_text(text, model) == len(encoding.encode(text, disallowed_special=()))
