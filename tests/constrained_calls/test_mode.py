"""Which models get constrained tool calls (`model.tool_calls`)."""

from __future__ import annotations

from countbot.constrained_calls.mode import uses_constrained
from countbot.llm.provider_choice import takes_direct_path


def test_auto_means_constrained_for_local_models_only_and_local_is_always_direct() -> None:
    assert uses_constrained("auto", "local/smollm2-135m")
    assert not uses_constrained("auto", "ollama/llama3.1")
    assert uses_constrained("constrained", "ollama/llama3.1")
    assert not uses_constrained("native", "local/x.gguf")
    assert takes_direct_path("litellm", "local/smollm2-135m")
