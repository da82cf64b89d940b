"""Our messages in the OpenAI chat format that litellm translates for every provider."""

from __future__ import annotations

import json

from countbot.llm.openai_format import EncodedWire, to_openai_messages, to_openai_tools
from countbot.llm.types import (
    AssistantMessage,
    ImagePart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)


def test_text_only_user_message_is_a_plain_string() -> None:
    messages = to_openai_messages([UserMessage((TextPart("one"), TextPart("two")))])

    assert messages == [{"role": "user", "content": "one\n\ntwo"}]


def test_images_become_image_url_parts_inline_or_by_url() -> None:
    message = UserMessage(
        (
            TextPart("compare"),
            ImagePart("image/jpeg", data="/9j/4AAQ"),
            ImagePart("image/png", url="https://example.com/b.png"),
            ImagePart("image/png", data="data:image/png;base64,iVBO"),
        )
    )

    (converted,) = to_openai_messages([message])

    assert [p.get("image_url", {}).get("url") for p in converted["content"]] == [
        None,
        "data:image/jpeg;base64,/9j/4AAQ",
        "https://example.com/b.png",
        "data:image/png;base64,iVBO",
    ]


def test_conversation_with_tools_round_trips_every_role() -> None:
    messages = to_openai_messages(
        [
            SystemMessage("be brief"),
            UserMessage((TextPart("list files"),)),
            AssistantMessage(
                tool_calls=(ToolCall("call_1", "ls", '{"path": "."}'),), reasoning="hidden"
            ),
            ToolResultMessage("call_1", "ls", "Error: denied", is_error=True),
            AssistantMessage(text="I could not list them."),
        ]
    )

    assert messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "list files"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "ls", "arguments": '{"path": "."}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "name": "ls", "content": "Error: denied"},
        {"role": "assistant", "content": "I could not list them."},
    ]


def test_tools_are_function_schemas() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    tools = to_openai_tools([ToolSpec("search", "Search the web.", schema)])

    assert tools == [
        {
            "type": "function",
            "function": {"name": "search", "description": "Search the web.", "parameters": schema},
        }
    ]


def test_encoded_wire_is_the_converted_json_request_after_request() -> None:
    """Each message and tool is encoded once and reused by identity: whatever a request holds,
    old or new, its arrays are the JSON of the conversion."""
    shot = ImagePart("image/png", data="iVBO")
    first = [
        SystemMessage("be brief"),
        UserMessage((TextPart("look"),)),
        AssistantMessage(tool_calls=(ToolCall("c1", "shot", "{}"),)),
        ToolResultMessage("c1", "shot", "done", images=(shot,)),
    ]
    schema = {"type": "object", "properties": {}}
    tools = [ToolSpec("shot", "Take a screenshot.", schema)]
    encoded = EncodedWire()

    for messages in (first, [*first, AssistantMessage(text="a cat")], first[:2]):
        wire_messages, wire_tools = encoded.encode(messages, tools)

        assert json.loads(bytes(wire_messages)) == to_openai_messages(messages)
        assert json.loads(bytes(wire_tools)) == to_openai_tools(tools)
    assert json.loads(bytes(encoded.encode([SystemMessage("other")], ())[1])) == []
