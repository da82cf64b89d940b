"""How a model stream ends: only a finished stream is an answer; every other ending says why.

Through real litellm against the scripted server, which can cut a stream, send nothing, answer
with plain text or with a whole JSON completion, and split an emoji's UTF-16 halves across chunks.
"""

from __future__ import annotations

import tests.llm.test_litellm_provider as paths
from countbot.llm.litellm_provider import LiteLLMProvider
from countbot.llm.types import StreamDone, StreamError, TextDelta
from tests.llm.test_litellm_provider import (  # noqa: F401 - provider_path runs each test on both paths
    RecordingSleep,
    collect,
    make_provider,
    provider_path,
)
from tests.support.scripted_model import Reply, ScriptedModelServer


def texts(events: list) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_a_stream_cut_off_mid_answer_is_an_error_with_the_partial_text(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script(Reply.cut("Hello there, how are"))
    events = await collect(make_provider(model_server))
    assert texts(events) == "Hello there, how are"
    error = events[-1]
    assert isinstance(error, StreamError)
    assert "cut off" in error.message and error.retryable
    assert error.partial_text == "Hello there, how are"
    assert not any(isinstance(e, StreamDone) for e in events)


async def test_an_empty_stream_is_retried_before_anything_reached_the_user(
    model_server: ScriptedModelServer,
) -> None:
    sleep = RecordingSleep()
    model_server.script(Reply.cut(""), Reply.text("second try"))
    events = await collect(make_provider(model_server, sleep))
    assert texts(events) == "second try"
    assert isinstance(events[-1], StreamDone)
    assert len(sleep.waits) == 1


async def test_an_empty_stream_every_time_ends_in_a_clear_error(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script(*[Reply.cut("")] * 3)
    events = await collect(make_provider(model_server, max_retries=2))
    # Each retry is announced (nothing reached the user), then one error ends the stream.
    assert [e.type for e in events] == ["retry", "retry", "error"]
    assert isinstance(events[-1], StreamError) and "empty answer" in events[-1].message


async def test_a_plain_text_body_is_an_error_naming_what_came(
    model_server: ScriptedModelServer,
) -> None:
    page = "<html>login page of some proxy</html>"
    model_server.script(Reply.body(page, content_type="text/html"))
    events = await collect(make_provider(model_server))
    assert len(events) == 1 and isinstance(events[0], StreamError)
    assert "text/html" in events[0].message and not events[0].retryable


async def test_a_whole_json_completion_is_understood_as_the_answer(
    model_server: ScriptedModelServer,
) -> None:
    # A proxy that ignores `stream: true` answers the streamed request and the plain one alike.
    model_server.script(Reply.completion("The whole answer."), Reply.text("The whole answer."))
    events = await collect(make_provider(model_server))
    assert texts(events) == "The whole answer."
    done = events[-1]
    assert isinstance(done, StreamDone) and done.message.text == "The whole answer."
    if paths.PROVIDER is LiteLLMProvider:
        # litellm's stream parser drops the body, so that path asks once more without streaming.
        assert model_server.requests[-1].get("stream") is False
    else:
        assert len(model_server.requests) == 1


async def test_an_emoji_split_across_chunks_arrives_whole(
    model_server: ScriptedModelServer,
) -> None:
    # Two chunks: "ab" + high surrogate, then low surrogate + "cd" (JSON \\u escapes on the wire).
    model_server.script(Reply.text("ab\ud83d\ude00cd", chunks=2))
    events = await collect(make_provider(model_server))
    done = events[-1]
    assert isinstance(done, StreamDone) and done.message.text == "ab\U0001f600cd"
    assert texts(events) == "ab\U0001f600cd"
    assert all(text.encode() for text in (e.text for e in events if isinstance(e, TextDelta)))


async def test_a_lone_surrogate_from_the_model_becomes_a_replacement_character(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script(Reply.text("x\udc00y\ud800", chunks=2))
    events = await collect(make_provider(model_server))
    done = events[-1]
    assert isinstance(done, StreamDone) and done.message.text == "x\ufffdy\ufffd"
    assert texts(events) == "x\ufffdy\ufffd"
