"""Images returned by tools reach the model after the run of tool results, in a user message."""

from __future__ import annotations

from countbot.agent.history import ToolResultEntry, from_record, to_record, tool_result_message
from countbot.llm.openai_format import to_openai_messages
from countbot.llm.types import AssistantMessage, ImagePart, ToolCall, ToolResultMessage

PNG = ImagePart("image/png", data="iVBORw0KGgo=")


def test_images_follow_all_the_tool_results_of_one_response() -> None:
    calls = (ToolCall("a", "shot", "{}", {}), ToolCall("b", "echo", "{}", {}))
    wire = to_openai_messages(
        [
            AssistantMessage("", calls),
            ToolResultMessage("a", "shot", "[image 1]", images=(PNG,)),
            ToolResultMessage("b", "echo", "hi"),
        ]
    )
    assert [m["role"] for m in wire] == ["assistant", "tool", "tool", "user"]
    assert wire[3]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
    }


def test_tool_images_survive_storage_and_become_text_for_blind_models() -> None:
    entry = ToolResultEntry("a", "shot", "[image 1]", images=(PNG,))
    stored = from_record(to_record(entry))
    assert stored == entry
    assert tool_result_message(stored, vision=True).images == (PNG,)
    blind = tool_result_message(stored, vision=False)
    assert blind.images == () and "[image returned: image/png]" in blind.content
