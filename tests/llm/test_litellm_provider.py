"""Both providers against the scripted OpenAI-compatible server: every test runs on the direct
path (httpx) and on the litellm path (real litellm), so neither can rot."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from countbot.llm.direct_provider import DirectProvider
from countbot.llm.litellm_provider import LiteLLMProvider
from countbot.llm.model_info import model_info
from countbot.llm.provider_options import ProviderOptions
from countbot.llm.retrying_provider import RetryingProvider
from countbot.llm.types import (
    AssistantMessage,
    ChatRequest,
    ImagePart,
    ReasoningDelta,
    StreamDone,
    StreamError,
    StreamEvent,
    SystemMessage,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallReady,
    ToolResultMessage,
    ToolSpec,
    UsageReport,
    UserMessage,
)
from tests.llm.conftest import HeaderRecorder
from tests.support.scripted_model import Reply, ScriptedModelServer

API_KEY = "sk-test-4f8e2a9c7b1d"
HELLO = ChatRequest((SystemMessage("You are terse."), UserMessage((TextPart("hi"),))))
# The provider class under test; `provider_path` switches it for each test of this module.
PROVIDER: type[DirectProvider] | type[LiteLLMProvider] = DirectProvider


@pytest.fixture(autouse=True, params=[DirectProvider, LiteLLMProvider], ids=["direct", "litellm"])
def provider_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "PROVIDER", request.param)


class RecordingSleep:
    """Stands in for asyncio.sleep: remembers each wait instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def make_provider(
    server: ScriptedModelServer, sleep: RecordingSleep | None = None, **options: Any
) -> RetryingProvider:
    return PROVIDER(
        "openai/test-model",
        ProviderOptions(
            api_base=server.base_url,
            api_key=API_KEY,
            sleep=sleep or RecordingSleep(),
            rng=lambda: 0.5,
            **options,
        ),
    )


async def collect(provider: RetryingProvider, request: ChatRequest = HELLO) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


def final(events: list[StreamEvent]) -> StreamEvent:
    assert isinstance(events[-1], StreamDone | StreamError)
    assert not any(isinstance(e, StreamDone | StreamError) for e in events[:-1])
    return events[-1]


async def test_text_streams_as_deltas_and_ends_with_the_whole_message(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script(Reply.text("Hello there, friend", chunks=3, usage=(12, 4)))

    events = await collect(make_provider(model_server))

    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 3
    assert "".join(deltas) == "Hello there, friend"
    done = final(events)
    assert isinstance(done, StreamDone)
    assert done.message.text == "Hello there, friend"
    assert (done.message.model, done.message.provider) == ("openai/test-model", "openai")
    assert done.stop_reason == "stop"
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (12, 4)
    assert any(isinstance(e, UsageReport) and e.usage == done.usage for e in events)


async def test_request_carries_messages_tools_and_options(
    model_server: ScriptedModelServer,
) -> None:
    tool = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}})
    request = ChatRequest(HELLO.messages, tools=(tool,), temperature=0.2, max_tokens=50)

    await collect(make_provider(model_server), request)

    body = model_server.requests[0]
    assert body["model"] == "test-model"
    assert body["stream"] is True
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "hi"},
    ]
    assert body["tools"][0]["function"]["name"] == "read_file"
    assert (body["temperature"], body["max_tokens"]) == (0.2, 50)


async def test_reasoning_streams_separately_from_the_answer(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script(Reply.text("42", reasoning="Six times seven."))

    events = await collect(make_provider(model_server))

    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Six times seven."]
    done = final(events)
    assert isinstance(done, StreamDone)
    assert (done.message.reasoning, done.message.text) == ("Six times seven.", "42")


async def test_tool_call_split_over_many_chunks_is_reassembled(
    model_server: ScriptedModelServer,
) -> None:
    arguments = json.dumps({"path": "notes/today.md", "lines": [1, 2, 3], "encoding": "utf-8"})
    model_server.script(Reply.tool_calls(("read_file", arguments), chunk_size=3))

    events = await collect(make_provider(model_server))

    ready = [e.tool_call for e in events if isinstance(e, ToolCallReady)]
    assert len(ready) == 1
    assert ready[0].name == "read_file"
    assert ready[0].arguments_raw == arguments
    assert ready[0].arguments == json.loads(arguments)
    done = final(events)
    assert isinstance(done, StreamDone)
    assert done.stop_reason == "tool_calls"
    assert done.message.tool_calls == tuple(ready)


async def test_several_tool_calls_in_one_response_keep_their_order_and_ids(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script(
        Reply.tool_calls(
            ("read_file", '{"path": "a.txt"}'),
            ("list_dir", '{"path": "."}'),
            ("web_search", '{"query": "weather"}'),
            text="Let me look.",
        )
    )

    events = await collect(make_provider(model_server))

    done = final(events)
    assert isinstance(done, StreamDone)
    calls = done.message.tool_calls
    assert [c.name for c in calls] == ["read_file", "list_dir", "web_search"]
    assert [c.arguments for c in calls] == [{"path": "a.txt"}, {"path": "."}, {"query": "weather"}]
    assert len({c.id for c in calls}) == 3
    assert done.message.text == "Let me look."


async def test_broken_tool_json_is_repaired_or_kept_raw_with_an_error(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script(
        Reply.tool_calls(
            ("write_file", '{"path": "a.txt", "content": "hi",}'),
            ("read_file", '{"path": "b.txt"'),
            ("shell", "rm -rf nothing"),
            ("noop", ""),
        )
    )

    events = await collect(make_provider(model_server))

    done = final(events)
    assert isinstance(done, StreamDone)
    trailing_comma, missing_brace, garbage, empty = done.message.tool_calls
    assert trailing_comma.arguments == {"path": "a.txt", "content": "hi"}
    assert missing_brace.arguments == {"path": "b.txt"}
    assert garbage.arguments is None
    assert garbage.arguments_raw == "rm -rf nothing"
    assert garbage.parse_error and "JSON" in garbage.parse_error
    assert empty.arguments == {}


async def test_extra_headers_and_the_key_reach_the_provider(
    header_recorder: HeaderRecorder,
) -> None:
    provider = PROVIDER(
        "openai/test-model",
        ProviderOptions(
            api_base=header_recorder.base_url,
            api_key=API_KEY,
            extra_headers={"X-Title": "CountBot"},
        ),
    )

    done = final(await collect(provider))

    assert isinstance(done, StreamDone) and done.message.text == "ok"
    headers = header_recorder.requests[-1]
    assert headers["x-title"] == "CountBot"
    assert headers["authorization"] == f"Bearer {API_KEY}"


async def test_consecutive_calls_reuse_one_connection(header_recorder: HeaderRecorder) -> None:
    provider = PROVIDER(
        "openai/test-model", ProviderOptions(api_base=header_recorder.base_url, api_key="k")
    )

    for _ in range(3):
        assert isinstance(final(await collect(provider)), StreamDone)

    assert len(header_recorder.requests) == 3
    assert header_recorder.connections == 1


async def test_usage_of_a_priced_model_carries_its_cost(model_server: ScriptedModelServer) -> None:
    model_server.script(Reply.text("fine", usage=(1000, 500)))
    model = "openai/gpt-4o-mini"
    provider = PROVIDER(model, ProviderOptions(api_base=model_server.base_url, api_key=API_KEY))

    done = final(await collect(provider))

    assert isinstance(done, StreamDone)
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (1000, 500)
    assert done.usage.cost_usd > 0
    assert done.usage.cost_usd == model_info(model).cost(done.usage)


async def test_provider_errors_read_in_the_providers_own_words(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script(
        Reply.error(400, "This model's maximum context length is 8192 tokens."),
        Reply.error(404, "The model `test-model` does not exist."),
    )
    provider = make_provider(model_server)

    window, missing = [final(await collect(provider)) for _ in range(2)]

    assert isinstance(window, StreamError) and isinstance(missing, StreamError)
    assert window.message == (
        "The conversation is too long for the model's context window (HTTP 400): "
        "This model's maximum context length is 8192 tokens."
    )
    assert missing.message == (
        "The model or endpoint was not found (HTTP 404): The model `test-model` does not exist."
    )


async def test_429_waits_as_long_as_retry_after_then_succeeds(
    model_server: ScriptedModelServer,
) -> None:
    sleep = RecordingSleep()
    model_server.script(Reply.error(429, "Rate limit reached", retry_after=7), Reply.text("done"))

    events = await collect(make_provider(model_server, sleep))

    done = final(events)
    assert isinstance(done, StreamDone) and done.message.text == "done"
    assert sleep.waits == [7.0]
    assert len(model_server.requests) == 2


async def test_500_is_retried_after_a_jittered_backoff(model_server: ScriptedModelServer) -> None:
    sleep = RecordingSleep()
    model_server.script(Reply.error(500, "upstream exploded"), Reply.text("recovered"))

    events = await collect(make_provider(model_server, sleep))

    done = final(events)
    assert isinstance(done, StreamDone) and done.message.text == "recovered"
    assert sleep.waits == [0.5]  # rng 0.5 x base delay 1 s


async def test_retries_stop_after_max_retries(model_server: ScriptedModelServer) -> None:
    sleep = RecordingSleep()
    model_server.script(*[Reply.error(503, "overloaded")] * 5)

    events = await collect(make_provider(model_server, sleep, max_retries=2))

    error = final(events)
    assert isinstance(error, StreamError)
    assert error.retryable and error.status_code == 503
    assert "overloaded" in error.message
    assert len(model_server.requests) == 3
    assert sleep.waits == [0.5, 1.0]


async def test_401_is_not_retried_and_says_so(model_server: ScriptedModelServer) -> None:
    sleep = RecordingSleep()
    model_server.script(Reply.error(401, "Incorrect API key provided"))

    events = await collect(make_provider(model_server, sleep, fallbacks=("openai/other",)))

    error = final(events)
    assert isinstance(error, StreamError)
    assert (error.retryable, error.status_code) == (False, 401)
    assert "API key" in error.message
    assert len(model_server.requests) == 1
    assert sleep.waits == []


async def test_api_key_never_appears_in_error_messages(model_server: ScriptedModelServer) -> None:
    model_server.script(
        Reply.error(401, f"Incorrect API key provided: {API_KEY}"),
        Reply.error(400, f"bad request for key {API_KEY[:-2]}**"),
        Reply.drop(f"echo {API_KEY}", after_chunks=1),
    )
    provider = make_provider(model_server, max_retries=0)

    errors = [final(await collect(provider)) for _ in range(3)]

    assert all(isinstance(e, StreamError) for e in errors)
    for error in errors:
        assert API_KEY not in error.message
        assert API_KEY[:-2] not in error.message


async def test_hang_past_the_deadline_ends_with_a_retryable_error_and_aborts(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script(Reply.hang(30))

    events = await collect(make_provider(model_server, max_retries=0, request_timeout=1))

    error = final(events)
    assert isinstance(error, StreamError) and error.retryable
    assert "1 s" in error.message
    assert await asyncio.to_thread(model_server.wait_abandoned, 1)


async def test_stall_mid_answer_hits_the_same_deadline(model_server: ScriptedModelServer) -> None:
    model_server.script(Reply.text("aaaabbbbccccdddd", chunks=4, delay=0.8))

    events = await collect(make_provider(model_server, max_retries=3, request_timeout=2))

    error = final(events)
    assert isinstance(error, StreamError) and error.retryable
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown and shown == error.partial_text != "aaaabbbbccccdddd"
    assert len(model_server.requests) == 1  # text was shown, so no retry


async def test_dropped_stream_ends_with_partial_text_and_is_not_replayed(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script(Reply.drop("The answer is forty-two.", after_chunks=2), Reply.text("again"))

    events = await collect(make_provider(model_server))

    error = final(events)
    assert isinstance(error, StreamError) and error.retryable
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert error.partial_text == shown
    assert shown and "The answer is forty-two.".startswith(shown)
    assert len(model_server.requests) == 1


async def test_drop_before_any_text_is_retried(model_server: ScriptedModelServer) -> None:
    model_server.script(Reply.drop("never seen", after_chunks=0), Reply.text("second try"))

    events = await collect(make_provider(model_server))

    done = final(events)
    assert isinstance(done, StreamDone) and done.message.text == "second try"


async def test_fallback_model_answers_after_retries_are_exhausted(
    model_server: ScriptedModelServer,
) -> None:
    sleep = RecordingSleep()
    model_server.script(Reply.error(503), Reply.error(503), Reply.text("from the backup"))
    provider = make_provider(model_server, sleep, max_retries=1, fallbacks=("openai/backup-model",))

    events = await collect(provider)

    done = final(events)
    assert isinstance(done, StreamDone)
    assert done.message.text == "from the backup"
    assert done.message.model == "openai/backup-model"
    assert [r["model"] for r in model_server.requests] == ["test-model"] * 2 + ["backup-model"]


async def test_aclose_mid_stream_aborts_the_request(model_server: ScriptedModelServer) -> None:
    model_server.script(Reply.text("word " * 40, chunks=40, delay=0.05))
    stream = make_provider(model_server).stream(HELLO)

    first = await anext(stream)
    await stream.aclose()

    assert isinstance(first, TextDelta)
    assert await asyncio.to_thread(model_server.wait_abandoned, 1)


async def test_images_are_sent_as_image_url_parts(model_server: ScriptedModelServer) -> None:
    image = ImagePart(media_type="image/png", data="iVBORw0KGgo=")
    request = ChatRequest((UserMessage((TextPart("What is this?"), image)),))

    await collect(make_provider(model_server), request)

    content = model_server.requests[0]["messages"][0]["content"]
    assert content == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]


async def test_tool_history_replays_with_repaired_arguments(
    model_server: ScriptedModelServer,
) -> None:
    call = ToolCall("call_9", "read_file", '{"path": "a.txt",}')
    request = ChatRequest(
        (
            UserMessage((TextPart("read a.txt"),)),
            AssistantMessage(tool_calls=(call,)),
            ToolResultMessage("call_9", "read_file", "hello"),
        )
    )

    await collect(make_provider(model_server), request)

    assistant, result = model_server.requests[0]["messages"][1:]
    assert assistant["tool_calls"][0]["id"] == "call_9"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"path": "a.txt"}
    assert (result["role"], result["tool_call_id"], result["content"]) == (
        "tool",
        "call_9",
        "hello",
    )


async def test_complete_returns_the_message_or_the_error(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script(Reply.text("A short summary."), Reply.error(400, "bad"))
    provider = make_provider(model_server)

    message = await provider.complete(HELLO)
    error = await provider.complete(HELLO)

    assert isinstance(message, AssistantMessage) and message.text == "A short summary."
    assert isinstance(error, StreamError) and not error.retryable


async def test_unreachable_server_says_so_at_once_and_moves_to_the_fallback() -> None:
    with ScriptedModelServer() as server:
        base_url = server.base_url
    sleep = RecordingSleep()
    provider = PROVIDER(
        "openai/test-model",
        ProviderOptions(
            api_base=base_url, api_key=API_KEY, fallbacks=("openai/backup",), sleep=sleep
        ),
    )

    error = final(await collect(provider))

    assert isinstance(error, StreamError) and error.retryable
    assert error.message.startswith(f"Cannot reach {base_url}")
    assert error.message.endswith(": connection refused")
    assert error.model == "openai/backup"
    assert sleep.waits == []  # nothing listens: no backoff


async def test_unknown_provider_fails_at_once_in_words(model_server: ScriptedModelServer) -> None:
    provider = PROVIDER("nosuchvendor/some-model", ProviderOptions(api_key=API_KEY))

    error = final(await collect(provider))

    assert isinstance(error, StreamError) and not error.retryable
    assert error.message == (
        "unknown provider 'nosuchvendor' in model.name ('nosuchvendor/some-model')"
    )
    assert model_server.requests == []
